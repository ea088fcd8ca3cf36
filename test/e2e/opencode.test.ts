import { describe, expect, it } from "vitest";
import {
  AGENT_ENV_DUMP,
  LEAKABLE_TOKEN,
  MODEL_KEYS,
  OPENCODE_MODEL,
  sandboxConnections,
  useModelServer,
  useRealCliLisa,
} from "../support/agent-clis.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { BRANCH, DELIVERY_ROUTES, HELLO_WORLD, ISSUE, routesTaken } from "../support/hello-world.ts";
import { trackingBody } from "../support/tracking-body.ts";

const CONFIG = `label: bug\nproviders:\n  - opencode: { model: ${OPENCODE_MODEL} }\n`;

const lisa = useRealCliLisa();
const model = useModelServer();

// Its failure path (a 429 outlasting its own retries) runs in provider-fallback.test.ts; the
// classification of every error it prints is unit-tested on recorded output in test/providers.
describe("OpenCode, the real CLI against a scripted model", () => {
  it("edits the worktree, and Lisa commits, pushes and opens the pull request", async () => {
    const server = await model.start({
      turns: [
        // OpenCode's write refuses to overwrite a file it has not read in this session.
        { text: "Reading the README.", tool_use: [{ name: "read", input: { filePath: "{{CWD}}/README.md" } }] },
        { tool_use: [{ name: "write", input: { filePath: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
        { tool_use: [{ name: "bash", input: { command: AGENT_ENV_DUMP } }] },
        {
          tool_use: [
            {
              name: "write",
              input: {
                filePath: "{{CWD}}/.lisa-manifest.json",
                content: JSON.stringify({
                  title: "Fix the README heading",
                  what: "Spells World correctly.",
                  testing: "Checked by eye.",
                }),
              },
            },
          ],
        },
        { text: "Fixed the spelling in the README heading." },
      ],
    });
    const harness = await lisa.deliver(server, `${CONFIG}gates:\n  - grep -q 'Hello World' README.md\n`);
    const { github } = harness;

    // Every scripted tool call ran: --auto approved them.
    expect(server.toolResults().map((r) => [r.name, r.is_error])).toEqual([
      ["read", false],
      ["write", false],
      ["bash", false],
      ["write", false],
    ]);
    const [pull] = github.pulls(HELLO_WORLD);
    expect(pull).toMatchObject({ head: { ref: BRANCH }, base: { ref: "master" }, title: "Fix the README heading" });
    expect(pull?.body).toContain("Spells World correctly.");
    const remote = github.gitDir(HELLO_WORLD);
    expect(gitIn(remote, "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    // Only the agent's work is committed: OpenCode keeps its state and snapshots under HOME.
    expect(gitIn(remote, "diff", "--name-only", "master", BRANCH).trim().split("\n")).toEqual(["README.md", "agent-env.txt"]);
    const agentEnv = gitIn(remote, "show", `${BRANCH}:agent-env.txt`);
    expect(agentEnv).toContain("ANTHROPIC_API_KEY=");
    expect(agentEnv).toContain("OPENCODE_DISABLE_MODELS_FETCH=1");
    expect(agentEnv).not.toContain("GITHUB_TOKEN");
    expect(agentEnv).not.toContain(LEAKABLE_TOKEN);
    expect(harness.tokens.length).toBeGreaterThan(0);
    for (const token of harness.tokens) expect(agentEnv).not.toContain(token);
    expect(agentEnv).not.toContain("GEMINI_API_KEY");
    // In a network namespace of its own, it reached the model server through Lisa's egress proxy only.
    expect(agentEnv).toMatch(/^HTTPS_PROXY=http:\/\/127\.0\.0\.1:3128$/m);
    expect(await sandboxConnections(harness)).toEqual({ "opencode allowed": 5 });

    // --title spares the title request: every request is an agent turn, and the prompt came on stdin.
    expect(server.requests.map((r) => [r.path, r.kind])).toEqual(Array(5).fill(["/v1/messages", "main"]));
    // Its provider's key is at Lisa's proxy (the config in its home holds a placeholder): the API gets the real one.
    for (const request of server.requests) expect(request.headers?.["x-api-key"]).toBe(MODEL_KEYS.anthropic);
    expect(JSON.stringify(server.requests[0]?.body?.messages)).toContain("Spelling error in the README file");
    const tracking = trackingBody(github, HELLO_WORLD, ISSUE);
    expect(tracking).toMatch(
      /✅ Agent session 1: opencode \(scripted\/scripted-model\), implementing · \d+s · <\$0\.01 · 5 turns/,
    );
    // The config prices the scripted usage: 5 steps of 100 tokens in and 20 out at $3 and $15 per million.
    const [run] = await harness.lisa.store.runs.inState("review");
    expect(await harness.lisa.store.runs.cost(run?.id ?? 0)).toBeCloseTo(0.003, 6);
    expect(DELIVERY_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
  });
});
