import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  AGENT_ENV_DUMP,
  agentEnvSource,
  CLAUDE,
  deliverWithRealClis,
  sandboxConnections,
  useModelServer,
} from "../support/agent-clis.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { DELIVERY_ROUTES, fakeHelloWorld, NO_PR_ROUTES, useIntegrationContext } from "../support/integration.ts";
import { BRANCH, createHarness, deliverLabeled, OWNER, REPO, TOKEN } from "../support/lisa-harness.ts";

const ROUTES = DELIVERY_ROUTES;

const context = useIntegrationContext();
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
    const github = fakeHelloWorld({ config: "label: bug\ngates:\n  - grep -q 'Hello World' README.md\n", routes: [...ROUTES] });
    const harness = await deliverWithRealClis(context, server);

    const [pull] = github.state.pulls;
    expect(pull).toMatchObject({ head: BRANCH, base: "master", title: "Fix the README heading" });
    expect(pull?.body).toContain("Spells World correctly.");
    const remote = path.join(context.remoteRoot, `${OWNER}/${REPO}.git`);
    expect(gitIn(remote, "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    const agentEnv = gitIn(remote, "show", `${BRANCH}:agent-env.txt`);
    expect(agentEnv).toContain("ANTHROPIC_BASE_URL=");
    expect(agentEnv).not.toContain("GITHUB_TOKEN");
    expect(agentEnv).not.toContain(TOKEN);
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
    const tracking = github.trackingComment();
    expect(tracking).toMatch(/Agent session 1: claude, implementing · \d+s · \$0\.\d\d · \d+ turns/);
    // The CLI prices the scripted usage itself; a few hundred tokens cost a fraction of a cent.
    const [run] = harness.lisa.store.runsIn("review");
    // Claude Code made the worktree itself (--worktree); Lisa found it, delivered from it and removed it.
    const [step] = harness.lisa.store.steps(run?.id ?? 0);
    expect(step?.native_worktree).toMatch(/\/mirrors\/Codertocat\/Hello-World\.git\/\.claude\/worktrees\/lisa-1-1-p1-0$/);
    expect(existsSync(step?.native_worktree ?? "")).toBe(false);
    const mirror = path.join(harness.dataDir, "mirrors", OWNER, `${REPO}.git`);
    expect(gitIn(mirror, "worktree", "list")).not.toContain("lisa-1-1");
    expect(gitIn(mirror, "branch", "--list", "worktree-*").trim()).toBe("");
    expect(harness.lisa.store.runCost(run?.id ?? 0)).toBeGreaterThan(0);
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
    const github = fakeHelloWorld({
      config: "label: bug\nproviders:\n  - claude: { model: claude-opus-4-5 }\n  - claude: { model: claude-sonnet-4-5 }\n",
      routes: [...ROUTES],
    });
    const _harness = await deliverWithRealClis(context, server);

    expect(github.state.pulls).toHaveLength(1);
    const models = server.requests
      .filter((r) => r.path.startsWith("/v1/messages"))
      .map((r) => (r.body as { model?: string }).model);
    expect(models[0]).toBe("claude-opus-4-5");
    expect(models.slice(1).every((m) => m === "claude-sonnet-4-5")).toBe(true);
    const tracking = github.trackingComment();
    expect(tracking).toContain("❌ Agent session 1: claude (claude-opus-4-5), implementing");
    expect(tracking).toMatch(/· rate_limited/);
    expect(tracking).toContain("✅ Agent session 1: claude (claude-sonnet-4-5), implementing");
  });

  it("kills a session whose model stream stalls, at the stall deadline, and reports it", async () => {
    const server = await model.start({ turns: [{ stall: true }] });
    const github = fakeHelloWorld({
      config: "label: bug\nlimits:\n  stall_timeout: 3s\n",
      routes: [...NO_PR_ROUTES],
    });
    const harness = context.use(
      createHarness({ remoteRoot: context.remoteRoot, claudeBinary: CLAUDE, agentEnvSource: agentEnvSource(server.url) }),
    );
    await harness.lisa.start();
    const started = Date.now();

    await deliverLabeled(harness);

    expect(Date.now() - started).toBeLessThan(30_000);
    expect(github.state.pulls).toEqual([]);
    const tracking = github.trackingComment();
    expect(tracking).toContain("The agent session failed (stalled): claude printed nothing for 3s and was killed");
  });

  it("reports a CLI that is not installed", async () => {
    const github = fakeHelloWorld({
      config: "label: bug\n",
      routes: [...NO_PR_ROUTES],
    });
    const harness = context.use(
      createHarness({
        remoteRoot: context.remoteRoot,
        claudeBinary: "/nonexistent/bin/claude",
        agentEnvSource: agentEnvSource("http://127.0.0.1:9"),
      }),
    );
    await harness.lisa.start();

    await deliverLabeled(harness);

    const tracking = github.trackingComment();
    expect(tracking).toContain(
      "The agent session failed (not_installed): claude is not installed: `/nonexistent/bin/claude` was not found",
    );
  });
});
