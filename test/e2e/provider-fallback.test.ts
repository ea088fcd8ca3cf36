import { describe, expect, it } from "vitest";
import { type ModelServer, OPENCODE_MODEL, useModelServer, useRealCliLisa } from "../support/agent-clis.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { BRANCH, DELIVERY_ROUTES, HELLO_WORLD, ISSUE, routesTaken } from "../support/hello-world.ts";
import { trackingBody } from "../support/tracking-body.ts";

const GATES = "gates:\n  - grep -q 'Hello World' README.md\n";

/** The vendor dialect of each request that consumed a scripted turn, in order. */
const turnsBy = (server: ModelServer) =>
  server.requests.filter((r) => r.kind === "main").map((r) => (r.path.startsWith("/v1beta/") ? "gemini" : "anthropic"));

const lisa = useRealCliLisa();
const model = useModelServer();

/** Runs the example issue with `providers` against one scripted server playing both APIs; returns what GitHub saw. */
async function deliverWith(providers: string, turns: unknown[]) {
  const server = await model.start({ turns });
  const { github } = await lisa.deliver(server, `label: bug\nproviders:\n${providers}${GATES}`);
  expect(github.pulls(HELLO_WORLD)).toHaveLength(1);
  expect(gitIn(github.gitDir(HELLO_WORLD), "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
  expect(DELIVERY_ROUTES).toEqual(expect.arrayContaining(routesTaken(github)));
  return trackingBody(github, HELLO_WORLD, ISSUE);
}

describe("Falling back to another vendor's CLI when the model answers 429", () => {
  it("goes from Claude Code to Gemini CLI", async () => {
    const tracking = await deliverWith("  - claude: { model: claude-sonnet-4-5 }\n  - gemini: { model: gemini-2.5-flash }\n", [
      { error: { status: 429, message: "rate limited" } },
      { tool_use: [{ name: "write_file", input: { file_path: "README.md", content: "# Hello World\n" } }] },
      { text: "Done." },
    ]);

    expect(turnsBy(model.current)).toEqual(["anthropic", "gemini", "gemini"]);
    expect(tracking).toMatch(
      /❌ Agent session 1: claude \(claude-sonnet-4-5\), implementing · \d+s · \$0\.00(?: · 1 turns)? · rate_limited/,
    );
    expect(tracking).toMatch(/✅ Agent session 1: gemini \(gemini-2\.5-flash\), implementing · \d+s · <\$0\.01 · 2 turns/);
  });

  it("goes from Gemini CLI to OpenCode", async () => {
    const tracking = await deliverWith(`  - gemini: { model: gemini-2.5-flash }\n  - opencode: { model: ${OPENCODE_MODEL} }\n`, [
      // general.maxAttempts: 1, so Gemini CLI asks once.
      { error: { status: 429, message: "Resource has been exhausted (e.g. check quota)." } },
      { tool_use: [{ name: "read", input: { filePath: "{{CWD}}/README.md" } }] },
      { tool_use: [{ name: "write", input: { filePath: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
      { text: "Done." },
    ]);

    expect(turnsBy(model.current)).toEqual(["gemini", "anthropic", "anthropic", "anthropic"]);
    expect(tracking).toMatch(
      /❌ Agent session 1: gemini \(gemini-2\.5-flash\), implementing · \d+s · \$0\.00(?: · 1 turns)? · rate_limited/,
    );
    expect(tracking).toMatch(
      /✅ Agent session 1: opencode \(scripted\/scripted-model\), implementing · \d+s · <\$0\.01 · 3 turns/,
    );
  });

  it("goes from OpenCode, once its own retries are spent, to Claude Code", async () => {
    const tracking = await deliverWith(`  - opencode: { model: ${OPENCODE_MODEL} }\n  - claude: { model: claude-sonnet-4-5 }\n`, [
      // OpenCode retries a 429 a few times, honouring retry-after (else it backs off from 2 s); how
      // many depends on how long they take (5 on a busy machine, 6 here), so every one of its
      // requests gets the 429, and Claude Code's first request the next turn.
      { error: { status: 429, message: "rate limited", headers: { "retry-after": "0" } }, while_model: "scripted-model" },
      // Claude Code's Write refuses to overwrite a file it has not read in this session.
      { tool_use: [{ name: "Read", input: { file_path: "{{CWD}}/README.md" } }] },
      { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
      { text: "Done." },
    ]);

    const models = model.current.requests.filter((r) => r.kind === "main").map((r) => r.body?.model);
    const retries = models.filter((m) => m === "scripted-model").length;
    // OpenCode asked again after the first 429, and gave up before Claude Code took over.
    expect(retries).toBeGreaterThanOrEqual(2);
    expect(models).toEqual([...Array(retries).fill("scripted-model"), ...Array(3).fill("claude-sonnet-4-5")]);
    // What OpenCode reports once it gives up is its last error: the 429 it retried, or, under load
    // (seen twice with four test files at a time, never alone), an error with no HTTP status, which
    // Lisa counts as the API being unreachable. Both are transient, and either moves on to Claude Code.
    expect(tracking).toMatch(
      /❌ Agent session 1: opencode \(scripted\/scripted-model\), implementing · \d+s · \$0\.00(?: · 1 turns)? · (rate_limited|overloaded)/,
    );
    expect(tracking).toMatch(/✅ Agent session 1: claude \(claude-sonnet-4-5\), implementing · \d+s · <\$0\.01 · 3 turns/);
  });
});
