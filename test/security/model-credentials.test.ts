import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_KEY } from "../../src/providers/model-access.ts";
import { OPENCODE_MODEL, sandboxConnections, useModelServer, useRealCliLisa } from "../support/agent-clis.ts";
import { HELLO_WORLD } from "../support/hello-world.ts";

// Issue 36: the agent holds no model credential. Each real CLI, driven by the scripted model, runs
// a hostile agent's search for the real keys in its environment, every process's environment and
// command line, and every file it can read (its home, /tmp, the worktree, the mirror, /etc and /run:
// all but the host's own programs and libraries, and Node's and the CLI's install folders, which the
// sandbox shows read-only as the host has them and Lisa never writes). The keys are fresh random values;
// the search gets them reversed and reverses them itself, so nothing it leaves behind holds them.
// Meanwhile the scripted model server receives the real credential on every request.

const NEEDLES = "/tmp/lisa-test-needles";
const key = (prefix: string) => `${prefix}-${randomBytes(12).toString("hex")}`;
const reversed = (text: string) => [...text].reverse().join("");

/** The hostile agent's search, a shell script that says what it found, by place, and how much it searched, then removes itself. */
function search(secrets: string[]): string {
  const places = `"$HOME" /tmp "$PWD" "$(git rev-parse --path-format=absolute --git-common-dir)" /etc /run`;
  return [
    `printf '%s\\n' ${secrets.map((s) => `'${reversed(s)}'`).join(" ")} | rev > ${NEEDLES}`,
    `echo "credentials: $(env | grep -E '^(ANTHROPIC|CLAUDE_CODE_OAUTH|GEMINI|GOOGLE)[A-Z_]*=' | sort | tr '\\n' ' ')"`,
    `echo "in the environment: $(env | grep -cF -f ${NEEDLES})"`,
    `echo "in processes: $(cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -cF -f ${NEEDLES})"`,
    `echo "in files: $(grep -rlsF -f ${NEEDLES} --exclude=lisa-test-needles ${places} | tr '\\n' ' ')."`,
    `echo "files searched: $(find ${places} -type f 2>/dev/null | wc -l)"`,
    `echo "opencode config: $(grep -ho '"baseURL": *"[^"]*"' "$HOME/.config/opencode/opencode.json" 2>/dev/null | tr '\\n' ' ')"`,
    `rm ${NEEDLES} "$0"`,
    "",
  ].join("\n");
}

/** The CLIs refuse command substitution in a tool's command line: the agent writes its search as a script first. */
const SCRIPT = "lisa-search.sh";
const RUN_SCRIPT = `sh ${SCRIPT}`;

/** What the search reported, from the tool result the CLI sent back to the model. */
function report(results: { content: string }[]): string {
  const found = results.map((r) => r.content).find((content) => /files searched: \d+/.test(content));
  if (!found) throw new Error(`the CLI did not run the search: ${JSON.stringify(results).slice(0, 2_000)}`);
  return found;
}

/** That the search ran and found nothing, and what the model server received instead. */
function expectNoCredentialHeld(
  server: { requests: { headers?: Record<string, unknown>; body?: unknown }[]; toolResults(): { content: string }[] },
  secrets: string[],
  baseUrl: RegExp,
  { placeholderSeen = true }: { placeholderSeen?: boolean } = {},
) {
  const said = report(server.toolResults());
  expect(said).toContain("in the environment: 0");
  expect(said).toContain("in processes: 0");
  expect(said).toContain("in files: .");
  expect(Number(/files searched: (\d+)/.exec(said)?.[1])).toBeGreaterThan(10);
  // Its key variable holds the placeholder, its base URL leads to the bridge inside the sandbox.
  if (placeholderSeen) expect(said).toContain(`=${PLACEHOLDER_KEY}`);
  expect(said).toMatch(baseUrl);
  // Nothing the CLI sent the model holds a key either.
  const bodies = JSON.stringify(server.requests.map((r) => r.body));
  for (const secret of secrets) expect(bodies).not.toContain(secret);
}

/** A base URL at the bridge on the sandbox's loopback, with a capability of 43 characters, after `before`. */
const atBridge = (before: string, route: string) => new RegExp(`${before}http://127\\.0\\.0\\.1:3128/[\\w-]{43}/${route}`);

const lisa = useRealCliLisa();
const model = useModelServer();

describe("model credentials at Lisa's proxy, with the real CLIs", () => {
  it("Claude Code with an API key: the agent holds none, the API gets the real one", async () => {
    const apiKey = key("sk-ant-api03");
    const server = await model.start({
      turns: [
        { tool_use: [{ name: "Write", input: { file_path: `{{CWD}}/${SCRIPT}`, content: search([apiKey]) } }] },
        { tool_use: [{ name: "Bash", input: { command: RUN_SCRIPT, description: "Look for keys" } }] },
        { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
        { text: "Done." },
      ],
    });
    const harness = await lisa.deliver(server, "label: bug\n", { ANTHROPIC_API_KEY: apiKey });

    expectNoCredentialHeld(server, [apiKey], atBridge("ANTHROPIC_BASE_URL=", "anthropic"));
    const calls = server.requests.filter((r) => r.path.startsWith("/v1/messages"));
    expect(calls.length).toBeGreaterThanOrEqual(4);
    for (const call of calls) expect(call.headers?.["x-api-key"]).toBe(apiKey);
    expect(harness.github.pulls(HELLO_WORLD)).toHaveLength(1);
    // Every request went through the session's model endpoint, counted as the proxy counts connections.
    expect(await sandboxConnections(harness)).toEqual({ "claude allowed": server.requests.length });
  });

  it("Claude Code with an OAuth token: the agent holds none, the API gets the real bearer", async () => {
    const token = key("sk-ant-oat01");
    const server = await model.start({
      turns: [
        { tool_use: [{ name: "Write", input: { file_path: `{{CWD}}/${SCRIPT}`, content: search([token]) } }] },
        { tool_use: [{ name: "Bash", input: { command: RUN_SCRIPT, description: "Look for keys" } }] },
        { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
        { text: "Done." },
      ],
    });
    await lisa.deliver(server, "label: bug\n", { ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_OAUTH_TOKEN: token });

    // Claude Code keeps its OAuth variable from the commands it runs: the placeholder is not seen there.
    expectNoCredentialHeld(server, [token], atBridge("ANTHROPIC_BASE_URL=", "anthropic"), { placeholderSeen: false });
    const calls = server.requests.filter((r) => r.path.startsWith("/v1/messages"));
    expect(calls.length).toBeGreaterThanOrEqual(4);
    for (const call of calls) {
      expect(call.headers?.authorization).toBe(`Bearer ${token}`);
      // Claude Code says it holds an OAuth token, as it would with the real one.
      expect(String(call.headers?.["anthropic-beta"])).toContain("oauth-2025-04-20");
      expect(call.headers?.["x-api-key"]).toBeUndefined();
    }
  });

  it("Gemini CLI with an API key: the agent holds none, the API gets the real one", async () => {
    const apiKey = key("AIza-scripted");
    const server = await model.start({
      turns: [
        { tool_use: [{ name: "write_file", input: { file_path: SCRIPT, content: search([apiKey]) } }] },
        { tool_use: [{ name: "run_shell_command", input: { command: RUN_SCRIPT, description: "Look for keys" } }] },
        { tool_use: [{ name: "write_file", input: { file_path: "README.md", content: "# Hello World\n" } }] },
        { text: "Done." },
      ],
    });
    const harness = await lisa.deliver(server, "label: bug\nproviders:\n  - gemini: { model: gemini-2.5-flash }\n", {
      GEMINI_API_KEY: apiKey,
    });

    expectNoCredentialHeld(server, [apiKey], atBridge("GOOGLE_GEMINI_BASE_URL=", "gemini"));
    const calls = server.requests.filter((r) => r.path.startsWith("/v1beta/models/"));
    expect(calls.length).toBeGreaterThanOrEqual(4);
    for (const call of calls) {
      expect(call.headers?.["x-goog-api-key"]).toBe(apiKey);
      expect(call.headers?.authorization).toBeUndefined();
    }
    expect(harness.github.pulls(HELLO_WORLD)).toHaveLength(1);
  });

  it("OpenCode with its provider's key in Lisa's environment: the agent holds none, the API gets the real one", async () => {
    const apiKey = key("sk-ant-api03");
    const server = await model.start({
      turns: [
        { tool_use: [{ name: "write", input: { filePath: `{{CWD}}/${SCRIPT}`, content: search([apiKey]) } }] },
        { tool_use: [{ name: "bash", input: { command: RUN_SCRIPT, description: "Look for keys" } }] },
        { tool_use: [{ name: "read", input: { filePath: "{{CWD}}/README.md" } }] },
        { tool_use: [{ name: "write", input: { filePath: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
        { text: "Done." },
      ],
    });
    const harness = await lisa.deliver(server, `label: bug\nproviders:\n  - opencode: { model: ${OPENCODE_MODEL} }\n`, {
      ANTHROPIC_API_KEY: apiKey,
    });

    // OpenCode's provider is pointed at the bridge in the config Lisa writes into its home.
    expectNoCredentialHeld(server, [apiKey], atBridge('"baseURL": *"', "opencode-1"));
    const calls = server.requests.filter((r) => r.path === "/v1/messages");
    expect(calls.length).toBeGreaterThanOrEqual(5);
    for (const call of calls) expect(call.headers?.["x-api-key"]).toBe(apiKey);
    expect(harness.github.pulls(HELLO_WORLD)).toHaveLength(1);
  });
});
