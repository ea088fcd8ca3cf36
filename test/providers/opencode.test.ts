import { describe, expect, it } from "vitest";
import { opencodeProvider } from "../../src/providers/opencode.ts";

// Real output of `opencode run --format json` (opencode-ai 1.18.33) against the scripted model server
// (Anthropic dialect, a custom provider on @ai-sdk/anthropic priced at $3/$15 per million tokens).

/** Three steps: write a file, run a shell command, answer (research sample `opencode-success`). */
const SUCCESS = String.raw`{"type":"step_start","timestamp":1795322284831,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"id":"prt_2018c0af6001ks0croNhRWv4qs","messageID":"msg_2018c0123001pBz9fNkX5MSW8R","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","type":"step-start"}}
{"type":"tool_use","timestamp":1795322284878,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"type":"tool","tool":"write","callID":"toolu_37c269213f8a141c25c046d9","state":{"status":"completed","input":{"filePath":"/tmp/lisa-research/gemini-opencode/work/opencode.r5LdeD/repo/hello.txt","content":"hello from scripted write\n"},"output":"Wrote file successfully.","metadata":{"diagnostics":{},"filepath":"/tmp/lisa-research/gemini-opencode/work/opencode.r5LdeD/repo/hello.txt","exists":false,"truncated":false},"title":"hello.txt","time":{"start":1795322284819,"end":1795322284869}},"id":"prt_2018c0afd001b37w5ugw0sQl8s","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","messageID":"msg_2018c0123001pBz9fNkX5MSW8R"}}
{"type":"step_finish","timestamp":1795322285188,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"id":"prt_2018c0c71001VuhVoa2oumcKHn","reason":"tool-calls","snapshot":"01638b3c5ec5c53d97d09bb399e80b093e0b1f8d","messageID":"msg_2018c0123001pBz9fNkX5MSW8R","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","type":"step-finish","tokens":{"total":7714,"input":7662,"output":52,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.023766}}
{"type":"step_start","timestamp":1795322285563,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"id":"prt_2018c0dd7001lsPV4mC5WxLxC7","messageID":"msg_2018c0d31001LKekDVk5OFkcPM","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","snapshot":"01638b3c5ec5c53d97d09bb399e80b093e0b1f8d","type":"step-start"}}
{"type":"tool_use","timestamp":1795322285809,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"type":"tool","tool":"bash","callID":"toolu_0618bc59ebc76b88254f0846","state":{"status":"completed","input":{"command":"echo shell-ran > shell.txt && git status --short > status.txt"},"output":"(no output)","metadata":{"output":"(no output)","exit":0,"truncated":false},"title":"echo shell-ran > shell.txt && git status --short > status.txt","time":{"start":1795322285548,"end":1795322285778}},"id":"prt_2018c0ddd001noeJucaVoAFSbe","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","messageID":"msg_2018c0d31001LKekDVk5OFkcPM"}}
{"type":"step_finish","timestamp":1795322286084,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"id":"prt_2018c0ff6001r7x4IcQgtHIa26","reason":"tool-calls","snapshot":"e463ec05f5a660149b6837f77e3f5da637d1ba32","messageID":"msg_2018c0d31001LKekDVk5OFkcPM","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","type":"step-finish","tokens":{"total":7804,"input":7765,"output":39,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.02388}}
{"type":"step_start","timestamp":1795322286492,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"id":"prt_2018c1183001itnVLScsdviUHF","messageID":"msg_2018c1093001pRfW6q6v1vVHIr","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","snapshot":"e463ec05f5a660149b6837f77e3f5da637d1ba32","type":"step-start"}}
{"type":"text","timestamp":1795322286492,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"id":"prt_2018c118a001nCt5w2lTG5sXwW","messageID":"msg_2018c1093001pRfW6q6v1vVHIr","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","type":"text","text":"All done: wrote hello.txt and ran the shell command.","time":{"start":1795322286474,"end":1795322286482}}}
{"type":"step_finish","timestamp":1795322286689,"sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","part":{"id":"prt_2018c12420018Xmd21TpHDN6rB","reason":"stop","snapshot":"e463ec05f5a660149b6837f77e3f5da637d1ba32","messageID":"msg_2018c1093001pRfW6q6v1vVHIr","sessionID":"ses_dfe74078cffeYcYEndMYKEr04l","type":"step-finish","tokens":{"total":7863,"input":7843,"output":20,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.023829}}
`;

/** Two 429s and a 500 retried by OpenCode itself (retry-after: 0), then success: no trace of them. */
const RECOVERED = String.raw`{"type":"step_start","timestamp":1795322361230,"sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","part":{"id":"prt_2018d35330014E6MLBn5mJHcyd","messageID":"msg_2018d26aa001oaV2TFd8E56gMY","sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","type":"step-start"}}
{"type":"tool_use","timestamp":1795322361321,"sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","part":{"type":"tool","tool":"write","callID":"toolu_b6e0d75bf4c37e259e5c2e69","state":{"status":"completed","input":{"filePath":"/tmp/lisa-research/gemini-opencode/work/opencode.J1s6ih/repo/hello.txt","content":"after retry\n"},"output":"Wrote file successfully.","metadata":{"diagnostics":{},"filepath":"/tmp/lisa-research/gemini-opencode/work/opencode.J1s6ih/repo/hello.txt","exists":false,"truncated":false},"title":"hello.txt","time":{"start":1795322361212,"end":1795322361307}},"id":"prt_2018d3548001OXAnx9cXCh4Q2S","sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","messageID":"msg_2018d26aa001oaV2TFd8E56gMY"}}
{"type":"step_finish","timestamp":1795322361825,"sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","part":{"id":"prt_2018d3798001OGUQ6NtzyMkkFC","reason":"tool-calls","snapshot":"7ba2feabfbc3c1b25039808813c70687160945b1","messageID":"msg_2018d26aa001oaV2TFd8E56gMY","sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","type":"step-finish","tokens":{"total":7711,"input":7662,"output":49,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.023721}}
{"type":"step_start","timestamp":1795322362290,"sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","part":{"id":"prt_2018d39a1001lOz8hFVTYKZUMH","messageID":"msg_2018d386f001ZKfTteJUdZ7N2v","sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","snapshot":"7ba2feabfbc3c1b25039808813c70687160945b1","type":"step-start"}}
{"type":"text","timestamp":1795322362290,"sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","part":{"id":"prt_2018d39a60013d6crLmBKonArr","messageID":"msg_2018d386f001ZKfTteJUdZ7N2v","sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","type":"text","text":"Recovered.","time":{"start":1795322362278,"end":1795322362284}}}
{"type":"step_finish","timestamp":1795322362464,"sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","part":{"id":"prt_2018d3a56001Idn3zAdRM6EiyW","reason":"stop","snapshot":"7ba2feabfbc3c1b25039808813c70687160945b1","messageID":"msg_2018d386f001ZKfTteJUdZ7N2v","sessionID":"ses_dfe72e121ffe2IWlJrwe3Wl20S","type":"step-finish","tokens":{"total":7771,"input":7762,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.023421}}
`;

/** Parallel tool calls, a shell command exiting 3, an unknown tool: all the agent's business, exit 0. */
const EDGE_CASES = String.raw`{"type":"step_start","timestamp":1795322451590,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"id":"prt_2018e95f9001QMTKVIgjfVvXvC","messageID":"msg_2018e88f2001gcz23aiGZJu25X","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","type":"step-start"}}
{"type":"tool_use","timestamp":1795322451688,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"type":"tool","tool":"write","callID":"toolu_6918e967ecdae91ddb834a9c","state":{"status":"completed","input":{"filePath":"relative.txt","content":"relative path\n"},"output":"Wrote file successfully.","metadata":{"diagnostics":{},"filepath":"/tmp/lisa-research/gemini-opencode/work/opencode.yINhn6/repo/relative.txt","exists":false,"truncated":false},"title":"relative.txt","time":{"start":1795322451502,"end":1795322451666}},"id":"prt_2018e9605001ZVEyL3keHF7Ich","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","messageID":"msg_2018e88f2001gcz23aiGZJu25X"}}
{"type":"tool_use","timestamp":1795322452011,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"type":"tool","tool":"bash","callID":"toolu_64850d0f6ca6aacd051c319f","state":{"status":"completed","input":{"command":"echo out; echo err >&2; exit 3"},"output":"out\nerr\n","metadata":{"output":"out\nerr\n","exit":3,"truncated":false},"title":"echo out; echo err >&2; exit 3","time":{"start":1795322451538,"end":1795322451990}},"id":"prt_2018e963e001wr4Taivq7MLxZ2","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","messageID":"msg_2018e88f2001gcz23aiGZJu25X"}}
{"type":"step_finish","timestamp":1795322452356,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"id":"prt_2018e996e001m8ftTPIDpq8u8B","reason":"tool-calls","snapshot":"43a5aedfed8cc13f083af90549f52a2e1e53de28","messageID":"msg_2018e88f2001gcz23aiGZJu25X","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","type":"step-finish","tokens":{"total":7728,"input":7662,"output":66,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.023976}}
{"type":"step_start","timestamp":1795322452937,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"id":"prt_2018e9b9a0013ESzLjtHMeTS9P","messageID":"msg_2018e9a4c001fSeEXOSF1AzQmD","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","snapshot":"43a5aedfed8cc13f083af90549f52a2e1e53de28","type":"step-start"}}
{"type":"tool_use","timestamp":1795322452937,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"type":"tool","tool":"invalid","callID":"toolu_90d796bdb79732924558132e","state":{"status":"completed","input":{"tool":"nonexistent_tool","error":"Model tried to call unavailable tool 'nonexistent_tool'. Available tools: bash, edit, glob, grep, invalid, read, skill, task, todowrite, webfetch, write."},"output":"The arguments provided to the tool are invalid: Model tried to call unavailable tool 'nonexistent_tool'. Available tools: bash, edit, glob, grep, invalid, read, skill, task, todowrite, webfetch, write.","metadata":{"truncated":false},"title":"Invalid Tool","time":{"start":1795322452915,"end":1795322452924}},"id":"prt_2018e9ba2001c51ZCWgqmFAO1w","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","messageID":"msg_2018e9a4c001fSeEXOSF1AzQmD"}}
{"type":"step_finish","timestamp":1795322453175,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"id":"prt_2018e9c86001EkgnSTB2GueUIU","reason":"tool-calls","snapshot":"43a5aedfed8cc13f083af90549f52a2e1e53de28","messageID":"msg_2018e9a4c001fSeEXOSF1AzQmD","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","type":"step-finish","tokens":{"total":7827,"input":7802,"output":25,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.023781}}
{"type":"step_start","timestamp":1795322453654,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"id":"prt_2018e9e7a001JxRxeV6nQqhPI3","messageID":"msg_2018e9d2e001uAc1L7FuY5xc5W","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","snapshot":"43a5aedfed8cc13f083af90549f52a2e1e53de28","type":"step-start"}}
{"type":"text","timestamp":1795322453655,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"id":"prt_2018e9e83001BIFNLSHzFsp72z","messageID":"msg_2018e9d2e001uAc1L7FuY5xc5W","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","type":"text","text":"edge cases done","time":{"start":1795322453635,"end":1795322453643}}}
{"type":"step_finish","timestamp":1795322453842,"sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","part":{"id":"prt_2018e9f41001dfmecUHp8uTlFZ","reason":"stop","snapshot":"43a5aedfed8cc13f083af90549f52a2e1e53de28","messageID":"msg_2018e9d2e001uAc1L7FuY5xc5W","sessionID":"ses_dfe718201ffeNaWmsACRHhoGQg","type":"step-finish","tokens":{"total":7968,"input":7957,"output":11,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.024036}}
`;

/** HTTP 429 on all six attempts: exit 1. */
const RATE_LIMITED = String.raw`{"type":"error","timestamp":1795322336198,"sessionID":"ses_dfe733afdffejfYDPFbwYSfDwu","error":{"name":"APIError","data":{"message":"Resource has been exhausted (e.g. check quota).","statusCode":429,"isRetryable":true,"responseHeaders":{"connection":"keep-alive","content-type":"application/json","date":"Sun, 22 Nov 2026 04:38:56 GMT","keep-alive":"timeout=5","retry-after":"0","transfer-encoding":"chunked"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Resource has been exhausted (e.g. check quota).\"}}","metadata":{"url":"http://127.0.0.1:37749/v1/messages"}}}}
`;

/** HTTP 500 on all six attempts: exit 1. */
const SERVER_ERROR = String.raw`{"type":"error","timestamp":1795322343689,"sessionID":"ses_dfe731ef6ffedeyj3yn6ruL3mJ","error":{"name":"APIError","data":{"message":"Internal error encountered.","statusCode":500,"isRetryable":true,"responseHeaders":{"connection":"keep-alive","content-type":"application/json","date":"Sun, 22 Nov 2026 04:39:03 GMT","keep-alive":"timeout=5","retry-after":"0","transfer-encoding":"chunked"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal error encountered.\"}}","metadata":{"url":"http://127.0.0.1:36027/v1/messages"}}}}
`;

/** Anthropic's 529 overloaded_error on all six attempts: exit 1. */
const OVERLOADED = String.raw`{"type":"error","timestamp":1795323385780,"sessionID":"ses_dfe633a3affe8O8pRWi2Vjvjpf","error":{"name":"APIError","data":{"message":"Overloaded","statusCode":529,"isRetryable":true,"responseHeaders":{"connection":"keep-alive","content-length":"75","content-type":"application/json","date":"Sun, 22 Nov 2026 04:56:25 GMT","keep-alive":"timeout=1","request-id":"req_dbff5f43fd29aa6ea8519ca3","retry-after":"0"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}","metadata":{"url":"http://127.0.0.1:33155/v1/messages"}}}}
`;

/** HTTP 401, not retried: exit 1. */
const UNAUTHENTICATED = String.raw`{"type":"error","timestamp":1795323393285,"sessionID":"ses_dfe631abfffeq8kK8beo1kEdom","error":{"name":"APIError","data":{"message":"invalid x-api-key","statusCode":401,"isRetryable":false,"responseHeaders":{"connection":"keep-alive","content-length":"86","content-type":"application/json","date":"Sun, 22 Nov 2026 04:56:33 GMT","keep-alive":"timeout=1","request-id":"req_6bff5180975e83dfbe0ab610"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}","metadata":{"url":"http://127.0.0.1:42915/v1/messages"}}}}
`;

/** HTTP 400, not retried: exit 1. */
const BAD_REQUEST = String.raw`{"type":"error","timestamp":1795322351532,"sessionID":"ses_dfe730168ffeFV7wxOZa7S9LpP","error":{"name":"APIError","data":{"message":"Invalid request: scripted bad request.","statusCode":400,"isRetryable":false,"responseHeaders":{"connection":"keep-alive","content-type":"application/json","date":"Sun, 22 Nov 2026 04:39:11 GMT","keep-alive":"timeout=5","retry-after":"0","transfer-encoding":"chunked"},"responseBody":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Invalid request: scripted bad request.\"}}","metadata":{"url":"http://127.0.0.1:39671/v1/messages"}}}}
`;

/** No API reachable after five retries (no status at all): exit 1. */
const UNREACHABLE = `{"type":"error","timestamp":1795322059574,"sessionID":"ses_dfe786e8fffe4zG2VVf0KZtjZe","error":{"name":"APIError","data":{"message":"Cannot connect to API: Unable to connect. Is the computer able to access the url?","isRetryable":true,"metadata":{"url":"https://opencode.ai/zen/v1/chat/completions"}}}}
`;

describe("opencodeProvider.args", () => {
  it("runs `run` with JSON events, auto-approval and a fixed title, the model only when chosen", () => {
    expect(opencodeProvider.args({ model: undefined })).toEqual(["run", "--format", "json", "--auto", "--title", "lisa"]);
    expect(opencodeProvider.args({ model: "scripted/scripted-model" })).toEqual([
      "run",
      "--format",
      "json",
      "--auto",
      "--title",
      "lisa",
      "--model",
      "scripted/scripted-model",
    ]);
  });

  it("passes its config, its switches and model providers' keys, never a GitHub token", () => {
    expect(opencodeProvider.env).toEqual(
      expect.arrayContaining(["OPENCODE_CONFIG", "OPENCODE_DISABLE_AUTOUPDATE", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"]),
    );
    for (const name of opencodeProvider.env) expect(name).not.toMatch(/GITHUB|^GH_|^LISA_/);
  });
});

describe("opencodeProvider.parse", () => {
  it("sums tokens and cost over the steps and takes the last message's text", () => {
    const parsed = opencodeProvider.parse({ stdout: SUCCESS, stderr: "", exitCode: 0 });
    expect(parsed).toEqual({
      ok: true,
      text: "All done: wrote hello.txt and ran the shell command.",
      costUsd: expect.closeTo(0.023766 + 0.02388 + 0.023829, 9),
      turns: 3,
      tokens: { input: 7662 + 7765 + 7843, output: 52 + 39 + 20 },
      sessionId: "ses_dfe74078cffeYcYEndMYKEr04l",
      failure: undefined,
      exitCode: 0,
    });
  });

  it.each([
    ["retries OpenCode recovered from", RECOVERED, "Recovered.", 2],
    ["failed tools, which are the agent's business", EDGE_CASES, "edge cases done", 3],
  ])("succeeds despite %s", (_what, stdout, text, turns) => {
    expect(opencodeProvider.parse({ stdout, stderr: "", exitCode: 0 })).toMatchObject({ ok: true, text, turns });
  });

  it.each([
    ["a 429", RATE_LIMITED, "rate_limited", "APIError 429: Resource has been exhausted (e.g. check quota)."],
    ["a 500", SERVER_ERROR, "overloaded", "APIError 500: Internal error encountered."],
    ["a 529", OVERLOADED, "overloaded", "APIError 529: Overloaded"],
    ["a 401", UNAUTHENTICATED, "auth", "APIError 401: invalid x-api-key"],
    ["a 400", BAD_REQUEST, "agent_error", "APIError 400: Invalid request: scripted bad request."],
    ["an unreachable API", UNREACHABLE, "overloaded", "APIError: Cannot connect to API: Unable to connect."],
  ])("classifies %s from the error event", (_what, stdout, kind, message) => {
    const parsed = opencodeProvider.parse({ stdout, stderr: "", exitCode: 1 });
    expect(parsed.ok).toBe(false);
    expect(parsed.failure?.kind).toBe(kind);
    // Lisa's words name the error; its text is an excerpt, quoted apart.
    const [label = "", text = ""] = message.split(/: (.*)/s);
    expect(parsed.failure?.message).toBe(`opencode reported an error (${label})`);
    expect(parsed.failure?.excerpt?.text ?? "").toMatch(new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    expect(parsed.sessionId).toMatch(/^ses_/);
    expect(parsed.turns).toBeUndefined();
  });

  // The shapes of the events above, with what other providers and errors put in them.
  const errorEvent = (error: unknown) => JSON.stringify({ type: "error", timestamp: 1, sessionID: "ses_x", error });
  it.each([
    [
      "OpenAI's insufficient_quota 429",
      {
        name: "APIError",
        data: {
          message: "quota",
          statusCode: 429,
          isRetryable: true,
          responseBody: '{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"quota"}}',
        },
      },
      "quota",
    ],
    ["a 402", { name: "APIError", data: { message: "pay", statusCode: 402, isRetryable: false } }, "quota"],
    ["a 403", { name: "APIError", data: { message: "no", statusCode: 403, isRetryable: false } }, "auth"],
    ["missing credentials", { name: "ProviderAuthError", data: { providerID: "anthropic", message: "no key" } }, "auth"],
    ["an unknown error", { name: "UnknownError", data: { message: "boom" } }, "agent_error"],
    ["an output limit", { name: "MessageOutputLengthError", data: {} }, "agent_error"],
  ])("classifies %s", (_what, error, kind) => {
    const stdout = `${SUCCESS.split("\n")[0]}\n${errorEvent(error)}\n`;
    expect(opencodeProvider.parse({ stdout, stderr: "", exitCode: 1 }).failure?.kind).toBe(kind);
  });

  it("fails a run that exits non-zero without an error event, keeping what it spent", () => {
    const parsed = opencodeProvider.parse({ stdout: SUCCESS, stderr: "Segmentation fault\n", exitCode: 139 });
    expect(parsed).toMatchObject({
      ok: false,
      turns: 3,
      failure: {
        kind: "crashed",
        message: "opencode exited with 139 and failed",
        excerpt: { from: "stderr", text: "Segmentation fault" },
      },
    });
    expect(parsed.costUsd).toBeGreaterThan(0.07);
  });

  it("reports a crash when no event was printed, with the tail of stderr", () => {
    const parsed = opencodeProvider.parse({ stdout: "", stderr: "Error: config is invalid\n", exitCode: 1 });
    expect(parsed.failure).toEqual({
      kind: "crashed",
      message: "opencode exited with 1 and printed no events",
      excerpt: { from: "stderr", text: "Error: config is invalid" },
      detail: "Error: config is invalid",
    });
  });
});

describe("opencodeProvider.progress", () => {
  const read = opencodeProvider.progress?.({});
  const progress = (line: string) => read?.(line);

  it("reads each model step, its cost, the files written, the commands run and the text, from real lines", () => {
    const events = SUCCESS.trimEnd().split("\n").map(progress);
    expect(events.filter((e) => e?.turn).length).toBe(3);
    expect(events.flatMap((e) => e?.files ?? [])).toEqual([
      "/tmp/lisa-research/gemini-opencode/work/opencode.r5LdeD/repo/hello.txt",
    ]);
    expect(events.flatMap((e) => e?.commands ?? [])).toEqual(["echo shell-ran > shell.txt && git status --short > status.txt"]);
    expect(events.map((e) => e?.text).filter(Boolean)).toEqual(["All done: wrote hello.txt and ran the shell command."]);
    const cost = events.reduce((sum, e) => sum + (e?.costUsd ?? 0), 0);
    expect(cost).toBeCloseTo(opencodeProvider.parse({ stdout: SUCCESS, stderr: "", exitCode: 0 }).costUsd);
  });

  it("ignores lines that are not events", () => {
    for (const line of [
      "",
      "INFO starting",
      "{broken",
      '{"type":"tool_use","part":{"tool":"read","state":{"input":{"filePath":"x"}}}}',
    ])
      expect(progress(line)).toBeUndefined();
  });
});
