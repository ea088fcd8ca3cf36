import { describe, expect, it } from "vitest";
import { geminiProvider } from "../../src/providers/gemini.ts";

// Real output of `gemini --approval-mode yolo --skip-trust --output-format json --model gemini-2.5-flash`
// (@google/gemini-cli 0.61.0) against the scripted model server, prompt on stdin.

/** A run that wrote a file, ran a shell command and answered: stdout (research sample `gemini-success`). */
const SUCCESS_STDOUT = `{
  "session_id": "07c3ce38-2278-47a3-a066-7fceb6a04ba1",
  "response": "All done: wrote hello.txt and ran the shell command.",
  "stats": {
    "models": {
      "gemini-2.5-flash": {
        "api": {
          "totalRequests": 3,
          "totalErrors": 0,
          "totalLatencyMs": 253,
          "errorsByType": {}
        },
        "tokens": {
          "input": 37075,
          "prompt": 37075,
          "candidates": 114,
          "total": 37189,
          "cached": 0,
          "thoughts": 0,
          "tool": 0
        },
        "roles": {
          "main": {
            "totalRequests": 3,
            "totalErrors": 0,
            "totalLatencyMs": 253,
            "tokens": {
              "input": 37075,
              "prompt": 37075,
              "candidates": 114,
              "total": 37189,
              "cached": 0,
              "thoughts": 0,
              "tool": 0
            }
          }
        }
      }
    },
    "tools": {
      "totalCalls": 2,
      "totalSuccess": 2,
      "totalFail": 0,
      "totalDurationMs": 122,
      "totalDecisions": {
        "accept": 2,
        "reject": 0,
        "modify": 0,
        "auto_accept": 0
      },
      "byName": {
        "write_file": {
          "count": 1,
          "success": 1,
          "fail": 0,
          "durationMs": 20,
          "decisions": {
            "accept": 1,
            "reject": 0,
            "modify": 0,
            "auto_accept": 0
          }
        },
        "run_shell_command": {
          "count": 1,
          "success": 1,
          "fail": 0,
          "durationMs": 102,
          "decisions": {
            "accept": 1,
            "reject": 0,
            "modify": 0,
            "auto_accept": 0
          }
        }
      }
    },
    "files": {
      "totalLinesAdded": 1,
      "totalLinesRemoved": 0
    }
  }
}`;

/** Its stderr: warnings only. */
const SUCCESS_STDERR = `Warning: Basic terminal detected (TERM=dumb). Visual rendering will be limited. For the best experience, use a terminal emulator with truecolor support.
Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
YOLO mode is enabled. All tool calls will be automatically approved.
YOLO mode is enabled. All tool calls will be automatically approved.
`;

/** HTTP 429 with `general.maxAttempts: 1`: stdout empty, exit 173 (429 mod 256). */
const RATE_LIMITED_STDERR = `Warning: Basic terminal detected (TERM=dumb). Visual rendering will be limited. For the best experience, use a terminal emulator with truecolor support.
Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
YOLO mode is enabled. All tool calls will be automatically approved.
YOLO mode is enabled. All tool calls will be automatically approved.
[STARTUP] Phase 'cleanup_ops' was started but never ended. Skipping metrics.
[STARTUP] Cannot measure phase 'cleanup_ops': start mark 'startup:cleanup_ops:start' not found (likely cleared by reset).
Attempt 1 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached
Error when talking to Gemini API Full report available at: /tmp/lisa-research/gemini-opencode/work/gemini.AqA6Bz/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T04-38-14-014Z.json RetryableQuotaError: Resource has been exhausted (e.g. check quota).
    at classifyGoogleError (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:307333:14)
    at retryWithBackoff (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308062:29)
    at process.processTicksAndRejections (node:internal/process/task_queues:103:5)
    at async GeminiChat.makeApiCallAndProcessStream (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332326:28)
    at async GeminiChat.streamWithRetries (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332079:29)
    at async Turn.run (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24)
    at async GeminiClient.processTurn (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:346675:22)
    at async GeminiClient.sendMessageStream (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:346772:14)
    at async file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/gemini-3HFX2LNT.js:12198:26
    at async main (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/gemini-3HFX2LNT.js:17627:5) {
  cause: {
    code: 429,
    message: 'Resource has been exhausted (e.g. check quota).',
    details: []
  },
  retryDelayMs: undefined,
  status: 429
}
{
  "session_id": "51854fba-3328-48ca-85fd-f0d7a9eea9fa",
  "error": {
    "type": "Error",
    "message": "Resource has been exhausted (e.g. check quota).",
    "code": 429
  }
}
`;

/** HTTP 500: exit 244. */
const SERVER_ERROR_STDERR = String.raw`Warning: Basic terminal detected (TERM=dumb). Visual rendering will be limited. For the best experience, use a terminal emulator with truecolor support.
Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
YOLO mode is enabled. All tool calls will be automatically approved.
YOLO mode is enabled. All tool calls will be automatically approved.
Attempt 1 failed: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}. Max attempts reached
Error when talking to Gemini API Full report available at: /tmp/lisa-research/gemini-opencode/work/gemini.u5K9lv/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T04-38-16-843Z.json _ApiError: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}
    at throwErrorIfNotOK (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)
    at process.processTicksAndRejections (node:internal/process/task_queues:103:5)
    at async file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267596:7
    at async Models.generateContentStream (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:268692:16)
    at async file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:311457:19
    at async file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:288018:23
    at async retryWithBackoff (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308039:23)
    at async GeminiChat.makeApiCallAndProcessStream (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332326:28)
    at async GeminiChat.streamWithRetries (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332079:29)
    at async Turn.run (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24) {
  status: 500
}
{
  "session_id": "6ae75f8c-a0c7-48e5-9d73-a550171036f0",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":500,\"message\":\"Internal error encountered.\",\"status\":\"INTERNAL\"}}",
    "code": 500
  }
}
`;

/** HTTP 400, never retried: exit 144. */
const BAD_REQUEST_STDERR = String.raw`Warning: Basic terminal detected (TERM=dumb). Visual rendering will be limited. For the best experience, use a terminal emulator with truecolor support.
Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
YOLO mode is enabled. All tool calls will be automatically approved.
YOLO mode is enabled. All tool calls will be automatically approved.
Error when talking to Gemini API Full report available at: /tmp/lisa-research/gemini-opencode/work/gemini.jJELcw/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T04-38-20-016Z.json _ApiError: {"error":{"code":400,"message":"Invalid request: scripted bad request.","status":"INVALID_ARGUMENT"}}
    at throwErrorIfNotOK (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)
    at process.processTicksAndRejections (node:internal/process/task_queues:103:5)
    at async file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267596:7
    at async Models.generateContentStream (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:268692:16)
    at async file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:311457:19
    at async file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:288018:23
    at async retryWithBackoff (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308039:23)
    at async GeminiChat.makeApiCallAndProcessStream (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332326:28)
    at async GeminiChat.streamWithRetries (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332079:29)
    at async Turn.run (file:///tmp/lisa-research/gemini-opencode/gem/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24) {
  status: 400
}
{
  "session_id": "b54ba76e-97cc-43c5-a82d-ded874d5201c",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":400,\"message\":\"Invalid request: scripted bad request.\",\"status\":\"INVALID_ARGUMENT\"}}",
    "code": 400
  }
}
`;

/** HTTP 401 (a bad API key): exit 145. */
const UNAUTHENTICATED_STDERR = String.raw`Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
YOLO mode is enabled. All tool calls will be automatically approved.
YOLO mode is enabled. All tool calls will be automatically approved.
Error when talking to Gemini API Full report available at: /tmp/g-0mrrLC/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T04-56-10-200Z.json _ApiError: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}
    at throwErrorIfNotOK (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)
    at process.processTicksAndRejections (node:internal/process/task_queues:103:5)
    at async file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267596:7
    at async Models.generateContentStream (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:268692:16)
    at async file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:311457:19
    at async file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:288018:23
    at async retryWithBackoff (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308039:23)
    at async GeminiChat.makeApiCallAndProcessStream (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332326:28)
    at async GeminiChat.streamWithRetries (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332079:29)
    at async Turn.run (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24) {
  status: 401
}
{
  "session_id": "f8511083-8e5b-4179-9240-349040a70fc2",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":401,\"message\":\"API key not valid. Please pass a valid API key.\",\"status\":\"UNAUTHENTICATED\"}}",
    "code": 401
  }
}
`;

/** No usable auth method (`GOOGLE_GEMINI_BASE_URL` without `security.auth.selectedType`): exit 41, before any request. */
const AUTH_METHOD_STDERR = `YOLO mode is enabled. All tool calls will be automatically approved.
{
  "session_id": "b5d0a34c-3520-4e55-9f62-f82a80c32d45",
  "error": {
    "type": "Error",
    "message": "Invalid auth method selected.",
    "code": 41
  }
}
`;

/** A stream broken off by a 503 error object after its first chunk: exit 247. */
const STREAM_OVERLOADED_STDERR = String.raw`Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
YOLO mode is enabled. All tool calls will be automatically approved.
YOLO mode is enabled. All tool calls will be automatically approved.
Error when talking to Gemini API Full report available at: /tmp/g-ea9AsM/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T04-56-12-611Z.json _ApiError: got status: UNAVAILABLE. {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}
    at ApiClient.processStreamResponse_1 (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267633:34)
    at processStreamResponse_1.next (<anonymous>)
    at resume (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:262559:17)
    at fulfill (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:262568:5)
    at process.processTicksAndRejections (node:internal/process/task_queues:103:5) {
  status: 503
}
{
  "session_id": "5ba0b52d-b707-4938-8b20-3c84b1ce1875",
  "error": {
    "type": "Error",
    "message": "got status: UNAVAILABLE. {\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}",
    "code": 503
  }
}
`;

/** The connection dropped before any answer: exit 1, code 1. */
const DROPPED_STDERR = `Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.
YOLO mode is enabled. All tool calls will be automatically approved.
YOLO mode is enabled. All tool calls will be automatically approved.
Error when talking to Gemini API Full report available at: /tmp/g-8ETVlp/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T04-56-15-513Z.json Error: exception TypeError: fetch failed sending request
    at file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267671:13
    at async Models.generateContentStream (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:268692:16)
    at async file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:311457:19
    at async file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:288018:23
    at async retryWithBackoff (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308039:23)
    at async GeminiChat.makeApiCallAndProcessStream (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332326:28)
    at async GeminiChat.streamWithRetries (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332079:29)
    at async Turn.run (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24)
    at async GeminiClient.processTurn (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:346675:22)
    at async GeminiClient.sendMessageStream (file:///work/main/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:346772:14)
{
  "session_id": "67104d37-24b8-4227-8bd9-0eda2ca05df6",
  "error": {
    "type": "Error",
    "message": "exception TypeError: fetch failed sending request",
    "code": 1
  }
}
`;

/** A model turn with no text: exit 0, yet an `INVALID_STREAM` error beside an empty response. */
const EMPTY_RESPONSE_STDOUT = `{
  "session_id": "9315b507-f9c1-4307-8b78-9d9dc0925c15",
  "response": "",
  "stats": {
    "models": {
      "gemini-2.5-flash": {
        "api": {
          "totalRequests": 1,
          "totalErrors": 1,
          "totalLatencyMs": 90,
          "errorsByType": {
            "NO_RESPONSE_TEXT": 1
          }
        },
        "tokens": {
          "input": 100,
          "prompt": 100,
          "candidates": 20,
          "total": 120,
          "cached": 0,
          "thoughts": 0,
          "tool": 0
        },
        "roles": {
          "main": {
            "totalRequests": 1,
            "totalErrors": 0,
            "totalLatencyMs": 90,
            "tokens": {
              "input": 100,
              "prompt": 100,
              "candidates": 20,
              "total": 120,
              "cached": 0,
              "thoughts": 0,
              "tool": 0
            }
          }
        }
      }
    },
    "tools": {
      "totalCalls": 0,
      "totalSuccess": 0,
      "totalFail": 0,
      "totalDurationMs": 0,
      "totalDecisions": {
        "accept": 0,
        "reject": 0,
        "modify": 0,
        "auto_accept": 0
      },
      "byName": {}
    },
    "files": {
      "totalLinesAdded": 0,
      "totalLinesRemoved": 0
    }
  },
  "error": {
    "type": "INVALID_STREAM",
    "message": "The model returned an empty response with no text or thoughts. This may be a transient API issue; please try again."
  }
}`;

describe("geminiProvider.args", () => {
  it("runs headless in YOLO mode with JSON output, trusting the worktree, the model only when chosen", () => {
    expect(geminiProvider.args({ model: undefined })).toEqual([
      "--approval-mode",
      "yolo",
      "--skip-trust",
      "--output-format",
      "json",
    ]);
    expect(geminiProvider.args({ model: "gemini-2.5-flash" })).toEqual([
      "--approval-mode",
      "yolo",
      "--skip-trust",
      "--output-format",
      "json",
      "--model",
      "gemini-2.5-flash",
    ]);
  });

  it("passes Google's credentials and its own switches, never another vendor's key or a GitHub token", () => {
    expect(geminiProvider.env).toEqual(expect.arrayContaining(["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"]));
    expect(geminiProvider.env).toContain("GEMINI_CLI_NO_RELAUNCH");
    for (const name of geminiProvider.env) expect(name).not.toMatch(/ANTHROPIC|OPENAI|CLAUDE|OPENCODE|GITHUB|^GH_/);
  });

  it("does not claim a native worktree: the CLI's --worktree is experimental", () => {
    expect(geminiProvider.nativeWorktree).toBeUndefined();
    expect(geminiProvider.capabilities).toEqual({ nativeWorktree: false, jsonOutput: true, costReporting: true });
  });
});

describe("geminiProvider.parse", () => {
  it("reads the answer, tokens, turns and session of a successful run", () => {
    expect(geminiProvider.parse({ stdout: SUCCESS_STDOUT, stderr: SUCCESS_STDERR, exitCode: 0 })).toEqual({
      ok: true,
      text: "All done: wrote hello.txt and ran the shell command.",
      // 37,075 tokens read at $0.30 and 114 written at $2.50 per million: Google's list price for 2.5 Flash.
      costUsd: expect.closeTo(0.0114075, 9),
      turns: 3,
      tokens: { input: 37075, output: 114 },
      sessionId: "07c3ce38-2278-47a3-a066-7fceb6a04ba1",
      failure: undefined,
      exitCode: 0,
    });
  });

  it("prices the tokens at the operator's prices, and a model it has no price for as the dearest it has", () => {
    const prices = { "gemini-2.5-flash": { input: 1, output: 10 }, "gemini-3-pro": { input: 2, output: 12 } };
    expect(geminiProvider.parse({ stdout: SUCCESS_STDOUT, stderr: "", exitCode: 0, prices }).costUsd).toBeCloseTo(0.038215, 9);
    const unknown = SUCCESS_STDOUT.replace('"gemini-2.5-flash": {', '"gemini-9-ultra": {');
    expect(geminiProvider.parse({ stdout: unknown, stderr: "", exitCode: 0, prices }).costUsd).toBeCloseTo(
      (37075 * 2 + 114 * 12) / 1e6,
      9,
    );
  });

  it.each([
    ["a 429", RATE_LIMITED_STDERR, 173, "rate_limited", "Error 429: Resource has been exhausted (e.g. check quota)."],
    ["a 500", SERVER_ERROR_STDERR, 244, "overloaded", "Error 500: "],
    ["a 503 breaking off a stream", STREAM_OVERLOADED_STDERR, 247, "overloaded", "Error 503: got status: UNAVAILABLE."],
    ["a 401", UNAUTHENTICATED_STDERR, 145, "auth", "Error 401: "],
    ["an unusable auth method", AUTH_METHOD_STDERR, 41, "auth", "Error 41: Invalid auth method selected."],
    ["a 400", BAD_REQUEST_STDERR, 144, "agent_error", "Error 400: "],
    ["a dropped connection", DROPPED_STDERR, 1, "agent_error", "Error 1: exception TypeError: fetch failed"],
  ])("classifies %s from the error object on stderr, past the stack trace", (_what, stderr, exitCode, kind, message) => {
    const parsed = geminiProvider.parse({ stdout: "", stderr, exitCode });
    expect(parsed.ok).toBe(false);
    expect(parsed.failure?.kind).toBe(kind);
    // Lisa's words name the error; its text is an excerpt, quoted apart.
    const [label = "", text = ""] = message.split(/: (.*)/s);
    expect(parsed.failure?.message).toBe(`gemini reported an error (${label})`);
    expect(parsed.failure?.excerpt?.text ?? "").toMatch(new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    expect(parsed.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(parsed.exitCode).toBe(exitCode);
  });

  it("fails a run that exits 0 with an error beside an empty response", () => {
    const parsed = geminiProvider.parse({ stdout: EMPTY_RESPONSE_STDOUT, stderr: "", exitCode: 0 });
    expect(parsed).toMatchObject({ ok: false, text: "", turns: 1, tokens: { input: 100, output: 20 } });
    expect(parsed.failure).toEqual({
      kind: "agent_error",
      message: "gemini reported an error (INVALID_STREAM)",
      excerpt: {
        from: "error report",
        text: "The model returned an empty response with no text or thoughts. This may be a transient API issue; please try again.",
      },
    });
  });

  it.each([
    [402, "quota"],
    [403, "auth"],
    [529, "overloaded"],
    [53, "agent_error"],
  ])("maps error code %s to %s", (code, kind) => {
    const stderr = JSON.stringify({ session_id: "s", error: { type: "Error", message: "scripted", code } }, null, 2);
    expect(geminiProvider.parse({ stdout: "", stderr, exitCode: code % 256 }).failure?.kind).toBe(kind);
  });

  it("does not trust a result when the CLI exited with an error status", () => {
    const parsed = geminiProvider.parse({ stdout: SUCCESS_STDOUT, stderr: "", exitCode: 1 });
    expect(parsed.ok).toBe(false);
    expect(parsed.failure?.kind).toBe("crashed");
  });

  it("reports a crash when nothing parses, with the tail of stderr", () => {
    const parsed = geminiProvider.parse({ stdout: "", stderr: "Error: Cannot find module 'x'\n", exitCode: 1 });
    expect(parsed.failure).toEqual({
      kind: "crashed",
      message: "gemini exited with 1 and printed no result",
      excerpt: { from: "stderr", text: "Error: Cannot find module 'x'" },
      detail: "Error: Cannot find module 'x'",
    });
    // A truncated object is no result either.
    expect(geminiProvider.parse({ stdout: SUCCESS_STDOUT.slice(0, 200), stderr: "", exitCode: 0 }).failure?.kind).toBe("crashed");
  });
});
