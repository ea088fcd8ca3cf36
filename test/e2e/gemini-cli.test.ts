import { describe, expect, it } from "vitest";
import {
  AGENT_ENV_DUMP,
  LEAKABLE_TOKEN,
  MODEL_KEYS,
  sandboxConnections,
  useModelServer,
  useRealCliLisa,
} from "../support/agent-clis.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { BRANCH, DELIVERY_ROUTES, HELLO_WORLD, ISSUE, labelBug, NO_PR_ROUTES, routesTaken } from "../support/hello-world.ts";
import { trackingBody } from "../support/tracking-body.ts";

const GEMINI_PATH = /^\/v1beta\/models\/gemini-2\.5-flash:streamGenerateContent$/;

const lisa = useRealCliLisa();
const model = useModelServer();

describe("Gemini CLI, the real CLI against a scripted model", () => {
  it("edits the worktree, and Lisa commits, pushes and opens the pull request", async () => {
    const server = await model.start({
      turns: [
        // write_file resolves relative paths against the workspace, the worktree Lisa runs it in.
        {
          text: "Fixing the heading.",
          tool_use: [{ name: "write_file", input: { file_path: "README.md", content: "# Hello World\n" } }],
        },
        {
          tool_use: [{ name: "run_shell_command", input: { command: AGENT_ENV_DUMP, description: "Record the environment" } }],
        },
        {
          tool_use: [
            {
              name: "write_file",
              input: {
                file_path: ".lisa-manifest.json",
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
    const harness = await lisa.deliver(
      server,
      "label: bug\nproviders:\n  - gemini: { model: gemini-2.5-flash }\ngates:\n  - grep -q 'Hello World' README.md\n",
    );
    const { github } = harness;

    // Every scripted tool call ran: YOLO mode declared the write and shell tools and approved them.
    expect(server.toolResults().map((r) => [r.name, r.is_error])).toEqual([
      ["write_file", false],
      ["run_shell_command", false],
      ["write_file", false],
    ]);
    const [pull] = github.pulls(HELLO_WORLD);
    expect(pull).toMatchObject({ head: { ref: BRANCH }, base: { ref: "master" }, title: "Fix the README heading" });
    expect(pull?.body).toContain("Spells World correctly.");
    const remote = github.gitDir(HELLO_WORLD);
    expect(gitIn(remote, "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    // Only the agent's work is committed: nothing the CLI keeps for itself (it lives under HOME).
    expect(gitIn(remote, "diff", "--name-only", "master", BRANCH).trim().split("\n")).toEqual(["README.md", "agent-env.txt"]);
    const agentEnv = gitIn(remote, "show", `${BRANCH}:agent-env.txt`);
    // Its key is at Lisa's proxy: its base URL leads to the bridge in its sandbox, and the API gets the real key.
    expect(agentEnv).toMatch(/^GOOGLE_GEMINI_BASE_URL=http:\/\/127\.0\.0\.1:3128\/[\w-]{43}\/gemini$/m);
    // In a network namespace of its own, it reached the model server through Lisa's egress proxy only.
    expect(agentEnv).toMatch(/^HTTPS_PROXY=http:\/\/127\.0\.0\.1:3128$/m);
    const connections = await sandboxConnections(harness);
    expect(Object.keys(connections)).toEqual(["gemini allowed"]);
    expect(connections["gemini allowed"]).toBeGreaterThan(0);
    expect(agentEnv).toContain("GEMINI_API_KEY=");
    expect(agentEnv).not.toContain("GITHUB_TOKEN");
    expect(agentEnv).not.toContain(LEAKABLE_TOKEN);
    expect(harness.tokens.length).toBeGreaterThan(0);
    for (const token of harness.tokens) expect(agentEnv).not.toContain(token);
    // Another vendor's credentials stay with that vendor.
    expect(agentEnv).not.toContain("ANTHROPIC_API_KEY");

    const main = server.requests.filter((r) => r.kind === "main");
    for (const request of server.requests) expect(request.headers?.["x-goog-api-key"]).toBe(MODEL_KEYS.gemini);
    expect(main.map((r) => r.path)).toEqual(Array(4).fill(expect.stringMatching(GEMINI_PATH)));
    // The prompt went in on standard input and reached the model.
    expect(JSON.stringify(main[0]?.body?.contents)).toContain("Spelling error in the README file");
    const tracking = trackingBody(github, HELLO_WORLD, ISSUE);
    // Gemini CLI reports tokens but no price.
    expect(tracking).toMatch(/✅ Agent session 1: gemini \(gemini-2\.5-flash\), implementing · \d+s · <\$0\.01 · 4 turns/);
    expect(DELIVERY_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
  });
});

describe("Gemini CLI failures", () => {
  it("reports a server error as overloaded, after a single attempt", async () => {
    const server = await model.start({ turns: [{ error: { status: 503, message: "The model is overloaded." } }] });
    const { github } = await lisa.deliver(server, "label: bug\nproviders:\n  - gemini: { model: gemini-2.5-flash }\n");

    expect(github.pulls(HELLO_WORLD)).toEqual([]);
    expect(server.requests.filter((r) => r.kind === "main")).toHaveLength(1);
    const tracking = trackingBody(github, HELLO_WORLD, ISSUE);
    expect(NO_PR_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
    expect(tracking).toContain(
      "The agent session failed (overloaded): gemini reported an error (Error 503). The error it reported:\n\n```text\nThe model is overloaded.\n```",
    );
    expect(tracking).toMatch(/❌ Agent session 1: gemini \(gemini-2\.5-flash\), implementing · \d+s · \$0\.00 · overloaded/);
  });

  it("kills a session whose model stream stalls, at the stall deadline", async () => {
    const server = await model.start({ turns: [{ stall: true, after_events: 1, text: "Looking at the README" }] });
    const env = await lisa.start(
      server.url,
      "label: bug\nproviders:\n  - gemini: { model: gemini-2.5-flash }\nlimits:\n  stall_timeout: 5s\n",
    );
    const started = Date.now();

    await labelBug(env);

    expect(Date.now() - started).toBeLessThan(30_000);
    expect(server.requests.find((r) => r.kind === "main")?.answer).toBe("stall after 1 events");
    const tracking = trackingBody(env.github, HELLO_WORLD, ISSUE);
    expect(tracking).toContain("The agent session failed (stalled): gemini printed nothing for 5s and was killed");
    expect(NO_PR_ROUTES).toEqual(expect.arrayContaining(routesTaken(env.github)));
  });
});
