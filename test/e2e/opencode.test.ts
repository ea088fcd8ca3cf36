import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  AGENT_ENV_DUMP,
  deliverWithRealClis,
  LEAKABLE_TOKEN,
  OPENCODE_MODEL,
  sandboxConnections,
  useModelServer,
} from "../support/agent-clis.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { DELIVERY_ROUTES, fakeHelloWorld, useIntegrationContext } from "../support/integration.ts";
import { BRANCH, OWNER, REPO, TOKEN } from "../support/lisa-harness.ts";

const ROUTES = DELIVERY_ROUTES;
const CONFIG = `label: bug\nproviders:\n  - opencode: { model: ${OPENCODE_MODEL} }\n`;

const context = useIntegrationContext();
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
    const github = fakeHelloWorld({ config: `${CONFIG}gates:\n  - grep -q 'Hello World' README.md\n`, routes: [...ROUTES] });
    const harness = await deliverWithRealClis(context, server);

    // Every scripted tool call ran: --auto approved them.
    expect(server.toolResults().map((r) => [r.name, r.is_error])).toEqual([
      ["read", false],
      ["write", false],
      ["bash", false],
      ["write", false],
    ]);
    const [pull] = github.state.pulls;
    expect(pull).toMatchObject({ head: BRANCH, base: "master", title: "Fix the README heading" });
    expect(pull?.body).toContain("Spells World correctly.");
    const remote = path.join(context.remoteRoot, `${OWNER}/${REPO}.git`);
    expect(gitIn(remote, "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    // Only the agent's work is committed: OpenCode keeps its state and snapshots under HOME.
    expect(gitIn(remote, "diff", "--name-only", "master", BRANCH).trim().split("\n")).toEqual(["README.md", "agent-env.txt"]);
    const agentEnv = gitIn(remote, "show", `${BRANCH}:agent-env.txt`);
    expect(agentEnv).toContain("ANTHROPIC_API_KEY=");
    expect(agentEnv).toContain("OPENCODE_DISABLE_MODELS_FETCH=1");
    expect(agentEnv).not.toContain("GITHUB_TOKEN");
    expect(agentEnv).not.toContain(LEAKABLE_TOKEN);
    expect(agentEnv).not.toContain(TOKEN);
    expect(agentEnv).not.toContain("GEMINI_API_KEY");
    // In a network namespace of its own, it reached the model server through Lisa's egress proxy only.
    expect(agentEnv).toMatch(/^HTTPS_PROXY=http:\/\/127\.0\.0\.1:3128$/m);
    expect(await sandboxConnections(harness)).toEqual({ "opencode allowed": 5 });

    // --title spares the title request: every request is an agent turn, and the prompt came on stdin.
    expect(server.requests.map((r) => [r.path, r.kind])).toEqual(Array(5).fill(["/v1/messages", "main"]));
    expect(JSON.stringify(server.requests[0]?.body?.messages)).toContain("Spelling error in the README file");
    const tracking = github.trackingComment();
    expect(tracking).toMatch(
      /✅ Agent session 1: opencode \(scripted\/scripted-model\), implementing · \d+s · \$0\.\d\d · 5 turns/,
    );
    // The config prices the scripted usage: 5 steps of 100 tokens in and 20 out at $3 and $15 per million.
    const [run] = harness.lisa.store.runsIn("review");
    expect(harness.lisa.store.runCost(run?.id ?? 0)).toBeCloseTo(0.003, 6);
  });
});
