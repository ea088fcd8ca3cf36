// Over 250 lines: the three real CLIs' shared scenarios, each written once with every CLI's own checks, and each CLI's own failures.
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  AGENT_ENV_DUMP,
  LEAKABLE_TOKEN,
  MODEL_KEYS,
  type ModelServer,
  OPENCODE_MODEL,
  type RealCliLisa,
  sandboxConnections,
  useModelServer,
  useRealCliLisa,
} from "../support/agent-clis.ts";
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

// Claude Code, Gemini CLI and OpenCode, the real CLIs against the scripted model server
// (dev/scripted-model-server.mjs). A scenario every CLI goes through is written once, with each
// CLI's own checks beside it; a CLI's own failures follow. Falling back from one CLI to another
// runs in provider-fallback.test.ts; the classification of every error a CLI prints is unit-tested
// on recorded output in test/providers.

const GEMINI_PATH = /^\/v1beta\/models\/gemini-2\.5-flash:streamGenerateContent$/;
const GEMINI = "providers:\n  - gemini: { model: gemini-2.5-flash }\n";
const OPENCODE = `providers:\n  - opencode: { model: ${OPENCODE_MODEL} }\n`;
const MANIFEST = JSON.stringify({ title: "Fix the README heading", what: "Spells World correctly.", testing: "Checked by eye." });

const lisa = useRealCliLisa();
const model = useModelServer();

/** One CLI in the delivery scenario: its config, its scripted turns, and what only it shows. */
interface Delivering {
  title: string;
  cli: "claude" | "gemini" | "opencode";
  /** `.github/lisa.yml` before the gate; Claude Code is the default provider, named by no line. */
  config: string;
  turns: object[];
  /** The first agent turn's conversation as the model received it (where the prompt is). */
  firstConversation(server: ModelServer): unknown;
  /** The session's line in the tracking comment. */
  session: RegExp;
  /** What only this CLI shows, checked after the scenario's shared checks. */
  own(harness: RealCliLisa, server: ModelServer, agentEnv: string): Promise<void>;
}

const DELIVERING: Delivering[] = [
  {
    title: "Claude Code",
    cli: "claude",
    config: "label: bug\n",
    turns: [
      {
        text: "Fixing the heading.",
        tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }],
      },
      { tool_use: [{ name: "Bash", input: { command: AGENT_ENV_DUMP, description: "Record the environment" } }] },
      { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/.lisa-manifest.json", content: MANIFEST } }] },
      { text: "Fixed the spelling in the README heading." },
    ],
    firstConversation: (server) => server.requests.find((r) => r.path.startsWith("/v1/messages"))?.body?.messages,
    // The CLI prices the scripted usage itself; a few hundred tokens cost a fraction of a cent.
    session: /Agent session 1: claude, implementing · \d+s · <\$0\.01 · \d+ turns/,
    async own(harness, server, agentEnv) {
      // Its key is at Lisa's proxy: its base URL leads to the bridge in its sandbox, and the API gets the real key.
      expect(agentEnv).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:3128\/[\w-]{43}\/anthropic$/m);
      const calls = server.requests.filter((r) => r.path.startsWith("/v1/messages"));
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) expect(call.headers?.["x-api-key"]).toBe(MODEL_KEYS.anthropic);
      // It ran in Lisa's sandbox: a throwaway home, a private /tmp.
      expect(agentEnv).toMatch(new RegExp(`^HOME=${path.join(tmpdir(), "lisa-home-")}\\w+$`, "m"));
      expect(agentEnv).toMatch(/^TMPDIR=\/tmp$/m);
      const [run] = await harness.lisa.store.runs.inState("review");
      // Claude Code made the worktree itself (--worktree); Lisa found it, delivered from it and removed it.
      const [step] = await harness.lisa.store.steps.of(run?.id ?? 0);
      expect(step?.native_worktree).toMatch(/\/mirrors\/Codertocat\/Hello-World\.git\/\.claude\/worktrees\/lisa-1-1-p1-0$/);
      expect(existsSync(step?.native_worktree ?? "")).toBe(false);
      const mirror = path.join(harness.dataDir, "mirrors", OWNER, `${REPO}.git`);
      expect(gitIn(mirror, "worktree", "list")).not.toContain("lisa-1-1");
      expect(gitIn(mirror, "branch", "--list", "worktree-*").trim()).toBe("");
      expect(await harness.lisa.store.runs.cost(run?.id ?? 0)).toBeGreaterThan(0);
    },
  },
  {
    title: "Gemini CLI",
    cli: "gemini",
    config: `label: bug\n${GEMINI}`,
    turns: [
      // write_file resolves relative paths against the workspace, the worktree Lisa runs it in.
      {
        text: "Fixing the heading.",
        tool_use: [{ name: "write_file", input: { file_path: "README.md", content: "# Hello World\n" } }],
      },
      { tool_use: [{ name: "run_shell_command", input: { command: AGENT_ENV_DUMP, description: "Record the environment" } }] },
      { tool_use: [{ name: "write_file", input: { file_path: ".lisa-manifest.json", content: MANIFEST } }] },
      { text: "Fixed the spelling in the README heading." },
    ],
    firstConversation: (server) => server.requests.find((r) => r.kind === "main")?.body?.contents,
    // Gemini CLI reports tokens but no price.
    session: /✅ Agent session 1: gemini \(gemini-2\.5-flash\), implementing · \d+s · <\$0\.01 · 4 turns/,
    async own(harness, server, agentEnv) {
      // Every scripted tool call ran: YOLO mode declared the write and shell tools and approved them.
      expect(server.toolResults().map((r) => [r.name, r.is_error])).toEqual([
        ["write_file", false],
        ["run_shell_command", false],
        ["write_file", false],
      ]);
      // Only the agent's work is committed: nothing the CLI keeps for itself (it lives under HOME).
      const remote = harness.github.gitDir(HELLO_WORLD);
      expect(gitIn(remote, "diff", "--name-only", "master", BRANCH).trim().split("\n")).toEqual(["README.md", "agent-env.txt"]);
      // Its key is at Lisa's proxy: its base URL leads to the bridge in its sandbox, and the API gets the real key.
      expect(agentEnv).toMatch(/^GOOGLE_GEMINI_BASE_URL=http:\/\/127\.0\.0\.1:3128\/[\w-]{43}\/gemini$/m);
      expect(agentEnv).toContain("GEMINI_API_KEY=");
      expect(agentEnv).not.toContain(LEAKABLE_TOKEN);
      // Another vendor's credentials stay with that vendor.
      expect(agentEnv).not.toContain("ANTHROPIC_API_KEY");
      for (const request of server.requests) expect(request.headers?.["x-goog-api-key"]).toBe(MODEL_KEYS.gemini);
      const main = server.requests.filter((r) => r.kind === "main");
      expect(main.map((r) => r.path)).toEqual(Array(4).fill(expect.stringMatching(GEMINI_PATH)));
    },
  },
  {
    title: "OpenCode",
    cli: "opencode",
    config: `label: bug\n${OPENCODE}`,
    turns: [
      // OpenCode's write refuses to overwrite a file it has not read in this session.
      { text: "Reading the README.", tool_use: [{ name: "read", input: { filePath: "{{CWD}}/README.md" } }] },
      { tool_use: [{ name: "write", input: { filePath: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
      { tool_use: [{ name: "bash", input: { command: AGENT_ENV_DUMP } }] },
      { tool_use: [{ name: "write", input: { filePath: "{{CWD}}/.lisa-manifest.json", content: MANIFEST } }] },
      { text: "Fixed the spelling in the README heading." },
    ],
    firstConversation: (server) => server.requests[0]?.body?.messages,
    session: /✅ Agent session 1: opencode \(scripted\/scripted-model\), implementing · \d+s · <\$0\.01 · 5 turns/,
    async own(harness, server, agentEnv) {
      // Every scripted tool call ran: --auto approved them.
      expect(server.toolResults().map((r) => [r.name, r.is_error])).toEqual([
        ["read", false],
        ["write", false],
        ["bash", false],
        ["write", false],
      ]);
      // Only the agent's work is committed: OpenCode keeps its state and snapshots under HOME.
      const remote = harness.github.gitDir(HELLO_WORLD);
      expect(gitIn(remote, "diff", "--name-only", "master", BRANCH).trim().split("\n")).toEqual(["README.md", "agent-env.txt"]);
      expect(agentEnv).toContain("ANTHROPIC_API_KEY=");
      expect(agentEnv).toContain("OPENCODE_DISABLE_MODELS_FETCH=1");
      expect(agentEnv).not.toContain(LEAKABLE_TOKEN);
      expect(agentEnv).not.toContain("GEMINI_API_KEY");
      expect(await sandboxConnections(harness)).toEqual({ "opencode allowed": 5 });
      // --title spares the title request: every request is an agent turn, and the prompt came on stdin.
      expect(server.requests.map((r) => [r.path, r.kind])).toEqual(Array(5).fill(["/v1/messages", "main"]));
      // Its provider's key is at Lisa's proxy (the config in its home holds a placeholder): the API gets the real one.
      for (const request of server.requests) expect(request.headers?.["x-api-key"]).toBe(MODEL_KEYS.anthropic);
      // The config prices the scripted usage: 5 steps of 100 tokens in and 20 out at $3 and $15 per million.
      const [run] = await harness.lisa.store.runs.inState("review");
      expect(await harness.lisa.store.runs.cost(run?.id ?? 0)).toBeCloseTo(0.003, 6);
    },
  },
];

describe.each(DELIVERING)("$title, the real CLI against a scripted model", (cli) => {
  it("edits the worktree, and Lisa commits, pushes and opens the pull request", async () => {
    const server = await model.start({ turns: cli.turns });
    const harness = await lisa.deliver(server, `${cli.config}gates:\n  - grep -q 'Hello World' README.md\n`);
    const { github } = harness;

    const [pull] = github.pulls(HELLO_WORLD);
    expect(pull).toMatchObject({ head: { ref: BRANCH }, base: { ref: "master" }, title: "Fix the README heading" });
    expect(pull?.body).toContain("Spells World correctly.");
    const remote = github.gitDir(HELLO_WORLD);
    expect(gitIn(remote, "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    const agentEnv = gitIn(remote, "show", `${BRANCH}:agent-env.txt`);
    expect(agentEnv).not.toContain("GITHUB_TOKEN");
    expect(harness.tokens.length).toBeGreaterThan(0);
    for (const token of harness.tokens) expect(agentEnv).not.toContain(token);
    // In a network namespace of its own, it reached the model server through Lisa's egress proxy only.
    expect(agentEnv).toMatch(/^HTTPS_PROXY=http:\/\/127\.0\.0\.1:3128$/m);
    const connections = await sandboxConnections(harness);
    expect(Object.keys(connections)).toEqual([`${cli.cli} allowed`]);
    expect(connections[`${cli.cli} allowed`]).toBeGreaterThan(0);
    // The prompt went in on standard input and reached the model.
    expect(JSON.stringify(cli.firstConversation(server))).toContain("Spelling error in the README file");
    expect(trackingBody(github, HELLO_WORLD, ISSUE)).toMatch(cli.session);
    expect(DELIVERY_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
    await cli.own(harness, server, agentEnv);
  });
});

/** One CLI whose model stream stalls: the turn that stalls, the deadline, and what only this CLI shows. */
interface Stalling {
  title: string;
  cli: "claude" | "gemini";
  providers: string;
  turn: object;
  seconds: number;
  own(server: ModelServer): void;
}

const STALLING: Stalling[] = [
  { title: "Claude Code", cli: "claude", providers: "", turn: { stall: true }, seconds: 3, own: () => {} },
  {
    title: "Gemini CLI",
    cli: "gemini",
    providers: GEMINI,
    // One event streamed, then nothing more.
    turn: { stall: true, after_events: 1, text: "Looking at the README" },
    seconds: 5,
    own: (server) => expect(server.requests.find((r) => r.kind === "main")?.answer).toBe("stall after 1 events"),
  },
];

describe.each(STALLING)("$title failures", (cli) => {
  it("kills a session whose model stream stalls, at the stall deadline, and reports it", async () => {
    const server = await model.start({ turns: [cli.turn] });
    const env = await lisa.start(server.url, `label: bug\n${cli.providers}limits:\n  stall_timeout: ${cli.seconds}s\n`);
    const started = Date.now();

    await labelBug(env);

    expect(Date.now() - started).toBeLessThan(30_000);
    expect(env.github.pulls(HELLO_WORLD)).toEqual([]);
    cli.own(server);
    const tracking = trackingBody(env.github, HELLO_WORLD, ISSUE);
    expect(tracking).toContain(
      `The agent session failed (stalled): ${cli.cli} printed nothing for ${cli.seconds}s and was killed`,
    );
    expect(NO_PR_ROUTES).toEqual(expect.arrayContaining(routesTaken(env.github)));
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

describe("Gemini CLI failures", () => {
  it("reports a server error as overloaded, after a single attempt", async () => {
    const server = await model.start({ turns: [{ error: { status: 503, message: "The model is overloaded." } }] });
    const { github } = await lisa.deliver(server, `label: bug\n${GEMINI}`);

    expect(github.pulls(HELLO_WORLD)).toEqual([]);
    expect(server.requests.filter((r) => r.kind === "main")).toHaveLength(1);
    const tracking = trackingBody(github, HELLO_WORLD, ISSUE);
    expect(NO_PR_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
    expect(tracking).toContain(
      "The agent session failed (overloaded): gemini reported an error (Error 503). The error it reported:\n\n```text\nThe model is overloaded.\n```",
    );
    expect(tracking).toMatch(/❌ Agent session 1: gemini \(gemini-2\.5-flash\), implementing · \d+s · \$0\.00 · overloaded/);
  });
});
