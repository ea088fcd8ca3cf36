import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_ENV_DUMP, MODEL_KEYS, sandboxConnections, useModelServer, useRealCliLisa } from "../support/agent-clis.ts";
import { gitIn } from "../support/git-fixtures.ts";
import {
  BRANCH,
  DELIVERY_ROUTES,
  HELLO_WORLD,
  ISSUE,
  labelBug,
  NO_PR_ROUTES,
  OWNER,
  REPO,
  routesTaken,
} from "../support/hello-world.ts";
import { trackingBody } from "../support/tracking-body.ts";

const lisa = useRealCliLisa();
const model = useModelServer();

describe("Claude Code, the real CLI against a scripted model", () => {
  it("edits the worktree, and Lisa commits, pushes and opens the pull request", async () => {
    const server = await model.start({
      turns: [
        {
          text: "Fixing the heading.",
          tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }],
        },
        { tool_use: [{ name: "Bash", input: { command: AGENT_ENV_DUMP, description: "Record the environment" } }] },
        {
          tool_use: [
            {
              name: "Write",
              input: {
                file_path: "{{CWD}}/.lisa-manifest.json",
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
    const harness = await lisa.deliver(server, "label: bug\ngates:\n  - grep -q 'Hello World' README.md\n");
    const { github } = harness;

    const [pull] = github.pulls(HELLO_WORLD);
    expect(pull).toMatchObject({ head: { ref: BRANCH }, base: { ref: "master" }, title: "Fix the README heading" });
    expect(pull?.body).toContain("Spells World correctly.");
    const remote = github.gitDir(HELLO_WORLD);
    expect(gitIn(remote, "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    const agentEnv = gitIn(remote, "show", `${BRANCH}:agent-env.txt`);
    // Its key is at Lisa's proxy: its base URL leads to the bridge in its sandbox, and the API gets the real key.
    expect(agentEnv).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:3128\/[\w-]{43}\/anthropic$/m);
    const calls = server.requests.filter((r) => r.path.startsWith("/v1/messages"));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.headers?.["x-api-key"]).toBe(MODEL_KEYS.anthropic);
    expect(agentEnv).not.toContain("GITHUB_TOKEN");
    expect(harness.tokens.length).toBeGreaterThan(0);
    for (const token of harness.tokens) expect(agentEnv).not.toContain(token);
    // It ran in Lisa's sandbox: a throwaway home, a private /tmp.
    expect(agentEnv).toMatch(new RegExp(`^HOME=${path.join(tmpdir(), "lisa-home-")}\\w+$`, "m"));
    expect(agentEnv).toMatch(/^TMPDIR=\/tmp$/m);
    // In a network namespace of its own, it reached the model server through Lisa's egress proxy only.
    expect(agentEnv).toMatch(/^HTTPS_PROXY=http:\/\/127\.0\.0\.1:3128$/m);
    const connections = await sandboxConnections(harness);
    expect(Object.keys(connections)).toEqual(["claude allowed"]);
    expect(connections["claude allowed"]).toBeGreaterThan(0);

    const firstRequest = JSON.stringify(server.requests.find((r) => r.path.startsWith("/v1/messages"))?.body?.messages);
    expect(firstRequest).toContain("Spelling error in the README file");
    const tracking = trackingBody(github, HELLO_WORLD, ISSUE);
    expect(tracking).toMatch(/Agent session 1: claude, implementing · \d+s · <\$0\.01 · \d+ turns/);
    // The CLI prices the scripted usage itself; a few hundred tokens cost a fraction of a cent.
    const [run] = await harness.lisa.store.runs.inState("review");
    // Claude Code made the worktree itself (--worktree); Lisa found it, delivered from it and removed it.
    const [step] = await harness.lisa.store.steps.of(run?.id ?? 0);
    expect(step?.native_worktree).toMatch(/\/mirrors\/Codertocat\/Hello-World\.git\/\.claude\/worktrees\/lisa-1-1-p1-0$/);
    expect(existsSync(step?.native_worktree ?? "")).toBe(false);
    const mirror = path.join(harness.dataDir, "mirrors", OWNER, `${REPO}.git`);
    expect(gitIn(mirror, "worktree", "list")).not.toContain("lisa-1-1");
    expect(gitIn(mirror, "branch", "--list", "worktree-*").trim()).toBe("");
    expect(await harness.lisa.store.runs.cost(run?.id ?? 0)).toBeGreaterThan(0);
    expect(DELIVERY_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
  });
});

describe("Claude Code failures", () => {
  it("moves to the next provider in the chain when the first is rate limited", async () => {
    const server = await model.start({
      turns: [
        { error: { status: 429, message: "rate limited" } },
        // Claude Code's Write refuses to overwrite a file it has not read in this session.
        { tool_use: [{ name: "Read", input: { file_path: "{{CWD}}/README.md" } }] },
        { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
        { text: "Done." },
      ],
    });
    const { github } = await lisa.deliver(
      server,
      "label: bug\nproviders:\n  - claude: { model: claude-opus-4-5 }\n  - claude: { model: claude-sonnet-4-5 }\n",
    );

    expect(github.pulls(HELLO_WORLD)).toHaveLength(1);
    const models = server.requests
      .filter((r) => r.path.startsWith("/v1/messages"))
      .map((r) => (r.body as { model?: string }).model);
    expect(models[0]).toBe("claude-opus-4-5");
    expect(models.slice(1).every((m) => m === "claude-sonnet-4-5")).toBe(true);
    const tracking = trackingBody(github, HELLO_WORLD, ISSUE);
    expect(tracking).toContain("❌ Agent session 1: claude (claude-opus-4-5), implementing");
    expect(tracking).toMatch(/· rate_limited/);
    expect(tracking).toContain("✅ Agent session 1: claude (claude-sonnet-4-5), implementing");
    expect(DELIVERY_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
  });

  it("kills a session whose model stream stalls, at the stall deadline, and reports it", async () => {
    const server = await model.start({ turns: [{ stall: true }] });
    const env = await lisa.start(server.url, "label: bug\nlimits:\n  stall_timeout: 3s\n");
    const started = Date.now();

    await labelBug(env);

    expect(Date.now() - started).toBeLessThan(30_000);
    expect(env.github.pulls(HELLO_WORLD)).toEqual([]);
    const tracking = trackingBody(env.github, HELLO_WORLD, ISSUE);
    expect(tracking).toContain("The agent session failed (stalled): claude printed nothing for 3s and was killed");
    expect(NO_PR_ROUTES).toEqual(expect.arrayContaining(routesTaken(env.github)));
  });

  it("reports a CLI that is not installed", async () => {
    const env = await lisa.start("http://127.0.0.1:9", "label: bug\n", "/nonexistent/bin/claude");

    await labelBug(env);

    const tracking = trackingBody(env.github, HELLO_WORLD, ISSUE);
    expect(tracking).toContain(
      "The agent session failed (not_installed): claude is not installed: `/nonexistent/bin/claude` was not found",
    );
    expect(NO_PR_ROUTES).toEqual(expect.arrayContaining(routesTaken(env.github)));
  });
});
