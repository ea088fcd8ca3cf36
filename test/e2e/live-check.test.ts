import { afterEach, describe, expect, it } from "vitest";
import type { EmulatedLisa } from "../../dev/emulated-lisa.ts";
import type { FakeInvocation } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { CONFIG, change, REPO, runOf, passOne as startPassOne } from "../support/pass-one.ts";

// Issue 24, "watch a pass live": while pass 2 runs on an open pull request, the "Lisa" check run on
// its head follows the agent's session (turns, cost, files, commands, its words fenced and
// redacted, the gates), written at most once per interval, and the tracking comment links to it.

const INTERVAL_MS = 1_500;
const SECRET = `ghp_${"A1b2C3d4E5".repeat(4)}`;
const INJECTION = `Done <img src=x onerror=alert(1)> [click](javascript:alert(1))\n# Owned\n@ann look, token ${SECRET}`;

/** A stream-json line of Claude Code: one content block of model message `id`. */
const assistant = (id: string, block: object) => ({
  type: "assistant",
  message: { id, type: "message", role: "assistant", content: [block] },
  session_id: "s",
});

/** Pass 2's session: seven lines over ten seconds (longer than the tracking comment's 10 s between edits), then the file, the manifest and the result line (its cost). */
const streamed: FakeInvocation = {
  ...change("health.ts", "returns JSON"),
  cost: 0.42,
  stream: [
    { delayMs: 1_400, line: assistant("msg_1", { type: "text", text: "Reading the review." }) },
    {
      delayMs: 1_400,
      line: assistant("msg_1", { type: "tool_use", id: "t1", name: "Read", input: { file_path: "{{CWD}}/health.ts" } }),
    },
    { delayMs: 1_400, line: "a log line that is no event" },
    // Claude Code restates its running total after each message it is given: counted once, not added.
    { delayMs: 0, line: { type: "result", subtype: "success", is_error: false, result: "first", total_cost_usd: 0.17 } },
    {
      delayMs: 1_400,
      line: assistant("msg_2", {
        type: "tool_use",
        id: "t2",
        name: "Write",
        input: { file_path: "{{CWD}}/health.ts", content: "x" },
      }),
    },
    {
      delayMs: 1_400,
      line: assistant("msg_3", { type: "tool_use", id: "t3", name: "Bash", input: { command: `npm test -- --token=${SECRET}` } }),
    },
    {
      delayMs: 1_400,
      line: assistant("msg_3", {
        type: "tool_use",
        id: "t4",
        name: "Edit",
        input: { file_path: "/etc/passwd", old_string: "a", new_string: "b" },
      }),
    },
    { delayMs: 1_400, line: assistant("msg_4", { type: "text", text: INJECTION }) },
  ],
};

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** Pass 1 delivered (it has no live check: no pull request yet), Lisa writing live checks at most every `intervalMs`. */
const passOne = (invocations: FakeInvocation[], intervalMs: number) =>
  startPassOne(
    invocations,
    CONFIG,
    (e) => {
      env = e;
    },
    { liveCheckIntervalMs: intervalMs },
  );

interface Written {
  at: number;
  method: string;
  path: string;
  body: { status?: string; conclusion?: string; output?: { title: string; summary: string }; body?: string };
}

describe("the live check run of a pass", () => {
  it("follows pass 2's session on the PR's head, at most once per interval, with the agent's text fenced and redacted", async () => {
    const { github, issue, pull, env: e } = await passOne([change("health.ts", "first"), streamed], INTERVAL_MS);
    const firstHead = pull.head.sha;
    // Pass 1 had no pull request to show live: its one check run is the gate's.
    expect(github.checkRuns(REPO).map((c) => c.output.title)).toEqual(["Ready for review"]);

    const written: Written[] = [];
    github.beforeAnswer((request, bodies) => {
      if (request.method === "GET" || request.status >= 300) return;
      if (request.path.includes("/check-runs") || request.path.includes("/issues/comments/"))
        written.push({ at: Date.now(), method: request.method, path: request.path, body: bodies.request as Written["body"] });
    });
    await github.submitReview(REPO, pull.number, { state: "CHANGES_REQUESTED", body: "Return JSON.", user: "ann" });
    await e.settle();
    expect((await runOf(e)).state).toBe("review");

    const created = written.find((w) => w.method === "POST" && w.path.endsWith("/check-runs"));
    const live = github.checkRuns(REPO).find((c) => c.head_sha === firstHead && c.output.title !== "Ready for review");
    expect(created?.body.status).toBe("in_progress");
    const updates = written.filter((w) => w.method === "PATCH" && w.path.endsWith(`/check-runs/${live?.id}`));
    const during = updates.filter((w) => !w.body.conclusion);
    const final = updates.at(-1);

    // At least three distinct views of the one session while it ran, each in progress.
    const views = new Set(during.map((w) => w.body.output?.summary));
    expect(views.size).toBeGreaterThanOrEqual(3);
    // Bounded: one write per interval at most (the first after the create), plus the final one.
    const times = [created?.at ?? 0, ...during.map((w) => w.at)];
    for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(INTERVAL_MS - 50);
    const span = (final?.at ?? 0) - (created?.at ?? 0);
    expect(during.length).toBeLessThanOrEqual(Math.ceil(span / INTERVAL_MS) + 1);

    const seen = during.map((w) => w.body.output?.summary ?? "").join("\n");
    // Numbered as the tracking comment numbers it: the step's second session, pass 1's being the first.
    expect(seen).toContain("**Session** 2, revising · **Provider** `claude`");
    expect(seen).toMatch(/\*\*Turns\*\* [23]/);
    expect(seen).toContain("**Files touched** (1): `health.ts`");
    expect(seen).toContain("- `npm test -- --token=‹redacted›`");
    // A file outside the worktree is named by its file name only.
    expect(final?.body.output?.summary).toContain("`health.ts`, `…/passwd`");

    // The agent's words are quoted in a fence, redacted; nothing of them is live markdown.
    const summary = final?.body.output?.summary ?? "";
    expect(summary).not.toContain(SECRET);
    const fence = summary.match(/```text\n([\s\S]*?)\n```/)?.[1] ?? "";
    expect(fence).toContain("Done <img src=x onerror=alert(1)> [click](javascript:alert(1))");
    expect(fence).toContain("token ‹redacted›");
    const outside = summary.replace(/```text\n[\s\S]*?\n```/, "");
    expect(outside).not.toMatch(/<img|javascript:|# Owned|@ann/);
    expect(summary).toContain("**Cost so far** $0.42");
    expect(summary).toContain("**Gates**: ✅ `test -f health.ts`");
    expect(final?.body).toMatchObject({ conclusion: "neutral", output: { title: "Pass 2's session is done" } });

    // The tracking comment pointed at the live check run while the session ran, and no longer does.
    const link = `[watch it live](${pull.html_url}/checks)`;
    expect(written.some((w) => w.path.includes("/issues/comments/") && w.body.body?.includes(link))).toBe(true);
    const tracking = github.comments(REPO, issue.number).find((c) => c.user.login === "lisa[bot]" && c.body.includes("Pass 2"));
    expect(tracking?.body).not.toContain(link);

    // Pass 2's own head gets the gate's check, as before.
    const [after] = github.pulls(REPO);
    expect(github.checkRuns(REPO).find((c) => c.head_sha === after?.head.sha)).toMatchObject({ conclusion: "success" });
  });

  it("shows a new session's header without the last session's words", async () => {
    const first: FakeInvocation = {
      ...change("health.ts", "BROKEN"),
      // Its session lasts past the live check's interval after its words, whatever the gates take after it.
      stream: [
        { line: assistant("msg_1", { type: "text", text: "Words of the first session." }) },
        { delayMs: 400, line: assistant("msg_1", { type: "text", text: "Done." }) },
      ],
    };
    const fix: FakeInvocation = {
      ...change("health.ts", "fixed"),
      stream: [
        { delayMs: 400, line: assistant("msg_2", { type: "tool_use", id: "t1", name: "Read", input: { file_path: "x" } }) },
      ],
    };
    const {
      github,
      pull,
      env: e,
    } = await startPassOne(
      [change("health.ts", "first"), first, fix],
      'label: lisa\ngates:\n  - "! grep -q BROKEN health.ts"\n',
      (started) => {
        env = started;
      },
      { liveCheckIntervalMs: 200 },
    );
    const summaries: string[] = [];
    github.beforeAnswer((request, bodies) => {
      const output = (bodies.request as Written["body"] | undefined)?.output;
      if (request.method !== "GET" && request.path.includes("/check-runs") && output) summaries.push(output.summary);
    });
    await github.submitReview(REPO, pull.number, { state: "CHANGES_REQUESTED", body: "Return JSON.", user: "ann" });
    await e.settle();

    // Pass 2's first session said its words; the gate failed and a second session took over.
    expect(summaries.some((s) => s.includes("**Session** 2") && s.includes("Words of the first session."))).toBe(true);
    const third = summaries.filter((s) => s.includes("**Session** 3"));
    expect(third.length).toBeGreaterThan(0);
    for (const summary of third) expect(summary).not.toContain("Words of the first session.");
  });

  it("ends as cancelled when ann aborts the run while pass 2's agent works", async () => {
    const hanging: FakeInvocation = {
      stream: [{ line: assistant("msg_1", { type: "tool_use", id: "t1", name: "Bash", input: { command: "npm test" } }) }],
      hang: true,
    };
    const { agent, github, issue, pull, env: e } = await passOne([change("health.ts", "first"), hanging], 200);
    await github.submitReview(REPO, pull.number, { state: "CHANGES_REQUESTED", body: "Return JSON.", user: "ann" });

    const live = () => github.checkRuns(REPO).find((c) => c.head_sha === pull.head.sha && c.output.title !== "Ready for review");
    await waitFor("pass 2's agent", () => agent.hangingPids());
    await waitFor("the command in the live check run", () => live()?.output.summary?.includes("- `npm test`"));
    expect(live()?.status).toBe("in_progress");
    await github.commentOnIssue(REPO, issue.number, "/lisa abort", "ann");
    await e.settle();
    expect(live()).toMatchObject({ status: "completed", conclusion: "cancelled", output: { title: "Pass 2 was stopped" } });
  });
});
