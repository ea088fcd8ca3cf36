import { describe, expect, it } from "vitest";
import { onPullRequestReview } from "../../src/handlers/on-pull-request-review.ts";
import { CHECK_NAME } from "../../src/reporting/check-summary.ts";
import { passMarker } from "../../src/reporting/review-package.ts";
import { CHECKS, type CommandWorld, READER, REPO, useCommandWorld, WRITER } from "../support/command-world.ts";
import { gitIn } from "../support/git-fixtures.ts";

// What a person does on one of Lisa's pull requests other than a comment: a review (on-review.ts),
// the pull request closed (on-pull-request-change.ts), "Re-run" on Lisa's check (rerun-check.ts).
// Each through handleGesture with the gesture Lisa's webhook handler makes of the emulator's
// payload, against a store in memory and the emulator in this process.

const world = useCommandWorld();

const runOf = (w: CommandWorld, runId: number) => w.store.runs.get(runId);
const short = (sha: string) => sha.slice(0, 7);

describe("an approval", () => {
  it("by a writer at the head accepts the run: the pass decided by approval, the label, no reply", async () => {
    const w = await world.begin();
    const { runId, issue, pull = 0 } = await w.runAt("review", { pullRequest: true });

    expect(await w.handle(await w.review(pull, { state: "APPROVED" }))).toBe("approved: gate accept");

    expect(await runOf(w, runId)).toMatchObject({ state: "accepted" });
    expect(await w.store.passes.current(runId)).toMatchObject({ state: "accepted", decided_by: WRITER, decided_via: "approval" });
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:accepted"]);
    expect(w.replies(pull)).toEqual([]);
  });

  it("of an older head is not counted, and Lisa says so on the pull request", async () => {
    const w = await world.begin();
    const { runId, pull = 0 } = await w.runAt("review", { pullRequest: true });
    const older = gitIn(w.github.gitDir(REPO), "rev-parse", "main").trim();

    expect(await w.handle(await w.review(pull, { state: "APPROVED", commitId: older }))).toBe("approval of an older head");

    expect(await runOf(w, runId)).toMatchObject({ state: "review" });
    expect(w.replies(pull)).toEqual([
      `@${WRITER} approved \`${short(older)}\`, but this pull request is now at \`${short(w.headSha)}\` (pass 1). Approve again to accept it.`,
    ]);
  });

  it("while the run is blocked is told on the issue, not acted on", async () => {
    const w = await world.begin();
    const { runId, issue, pull = 0 } = await w.runAt("blocked", { pullRequest: true });

    expect(await w.handle(await w.review(pull, { state: "APPROVED" }))).toBe("approval while blocked: told on the issue");

    expect(await runOf(w, runId)).toMatchObject({ state: "blocked" });
    expect(w.replies(pull)).toEqual([]);
    expect(w.replies(issue)).toEqual([
      `@${WRITER} approved acme/api#${pull} at \`${short(w.headSha)}\` while the run is blocked. It counts at the gate once the blocked steps are fixed (\`/lisa fix\`) or skipped (\`/lisa skip\`), if the pull request is still at that head.`,
    ]);
  });

  it("while a pass runs is left for the gate: nothing moves, nothing is written", async () => {
    const w = await world.begin();
    const { runId, pull = 0 } = await w.runAt("running", { pullRequest: true });
    const asked = await w.review(pull, { state: "APPROVED" });
    const before = w.mark();

    expect(await w.handle(asked)).toBe("approval recorded for the gate");

    expect(await runOf(w, runId)).toMatchObject({ state: "running" });
    expect(w.writesSince(before)).toEqual([]);
  });

  it("by a reader counts for nothing and gets no answer", async () => {
    const w = await world.begin();
    const { runId, issue, pull = 0 } = await w.runAt("review", { pullRequest: true });
    const asked = await w.review(pull, { state: "APPROVED", user: READER });
    const before = w.mark();

    expect(await w.handle(asked)).toBe(`ignored: ${READER} is not a writer`);

    expect(await runOf(w, runId)).toMatchObject({ state: "review" });
    expect(w.writesSince(before)).toEqual([]);
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:review"]);
  });

  it("whose body is a command is that command: a redirect, not an acceptance", async () => {
    const w = await world.begin();
    const { runId, stepId, pull = 0 } = await w.runAt("review", { pullRequest: true });
    const asked = await w.review(pull, { state: "APPROVED", body: "/lisa redirect also answer HEAD" });
    expect(asked.gesture).toMatchObject({ kind: "command", where: "review" });

    expect(await w.handle(asked)).toBe("pass 2 queued");

    expect(await runOf(w, runId)).toMatchObject({ state: "queued", current_pass: 2 });
    const pass = await w.store.passes.current(runId);
    expect((await w.store.guidance.forPass(pass?.id ?? 0)).map((g) => [g.source, g.body])).toEqual([
      ["command", "also answer HEAD"],
    ]);
    expect(w.github.comments(REPO, pull).filter((c) => c.body.includes(passMarker(runId, 2, stepId)))).toHaveLength(1);
  });

  it("dismissed takes the acceptance back: the run waits for review again", async () => {
    const w = await world.begin();
    const { runId, issue, pull = 0 } = await w.runAt("review", { pullRequest: true });
    const approval = await w.review(pull, { state: "APPROVED" });
    await w.handle(approval);
    expect(await runOf(w, runId)).toMatchObject({ state: "accepted" });
    const reviewId = approval.gesture.kind === "review" ? approval.gesture.reviewId : 0;
    const delivery = await w.github.dismissReview(REPO, pull, reviewId, { user: "acme", message: "Too early" });
    const triage = onPullRequestReview(delivery.payload as never);
    if ("ignored" in triage) throw new Error(triage.ignored);

    expect(await w.handle({ deliveryId: delivery.id, gesture: triage.command })).toBe("review dismissed: gate wait");

    expect(await runOf(w, runId)).toMatchObject({ state: "review" });
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:review"]);
    const change = (await w.store.events.of(runId)).filter((e) => e.to_state).at(-1);
    expect(change).toMatchObject({
      to_state: "review",
      actor: "acme",
      detail: `dismissed @${WRITER}'s approval on acme/api#${pull}`,
    });
    // The final report says whose approval was dismissed; mentions and references carry an invisible
    // joiner, so GitHub pings no one and links nothing.
    const report = w.github.comments(REPO, issue).find((c) => c.body.includes(`<!-- lisa:report run=${runId}`))?.body ?? "";
    expect(report).toMatch(new RegExp(`@\u200B?acme dismissed @\u200B?${WRITER}'s approval on acme/api#\u200B?${pull}`));
  });
});

describe("changes requested", () => {
  it("start the next pass with the review's body and inline comments, not its inline command, and mark the gate", async () => {
    const w = await world.begin();
    const { runId, stepId, pull = 0 } = await w.runAt("review", { pullRequest: true });
    const gate = {
      repo: REPO,
      number: pull,
      url: "",
      status: "approved" as const,
      approvers: ["acme", WRITER],
      blockers: [],
      headSha: w.headSha,
    };
    await w.store.steps.record(stepId, { gate });
    const asked = await w.review(pull, {
      state: "CHANGES_REQUESTED",
      body: "Not yet: see the comments.",
      comments: [
        { path: "health.ts", line: 1, body: "Name it healthz." },
        { path: "health.ts", line: 1, body: "/lisa redirect add a test" },
      ],
    });

    expect(await w.handle(asked)).toBe("pass 2 queued");

    expect(await runOf(w, runId)).toMatchObject({ state: "queued", current_pass: 2 });
    const pass = await w.store.passes.current(runId);
    expect(pass).toMatchObject({ trigger: "review", requested_by: WRITER });
    expect(await w.store.guidance.forPass(pass?.id ?? 0)).toMatchObject([
      { source: "review", author: WRITER, body: "Not yet: see the comments.", pr_number: pull },
      { source: "inline", author: WRITER, body: "Name it healthz.", path: "health.ts", line: 1 },
    ]);
    expect((await w.store.steps.get(stepId)).gate).toMatchObject({
      status: "changes_requested",
      approvers: ["acme"],
      blockers: [WRITER],
    });
    expect(w.github.comments(REPO, pull).filter((c) => c.body.includes(passMarker(runId, 2, stepId)))).toHaveLength(1);
    expect(w.replies(pull)).toEqual([]);
  });

  it("without a word or an inline comment: the gate notes them, and Lisa asks what should change", async () => {
    const w = await world.begin();
    const { runId, stepId, pull = 0 } = await w.runAt("review", { pullRequest: true });

    expect(await w.handle(await w.review(pull, { state: "CHANGES_REQUESTED" }))).toBe("changes requested without guidance");

    expect(await runOf(w, runId)).toMatchObject({ state: "review", current_pass: 1 });
    expect((await w.store.steps.get(stepId)).gate).toMatchObject({ status: "changes_requested", blockers: [WRITER] });
    expect(w.replies(pull)).toEqual([
      `@${WRITER}, what should change? Add inline comments or \`/lisa redirect <what to change>\`.`,
    ]);
  });

  it("with review.changes_requested: ignore, only hold the gate", async () => {
    const w = await world.begin();
    const config = { review: { changes_requested: "ignore" } };
    const { runId, stepId, pull = 0 } = await w.runAt("review", { pullRequest: true, config });

    expect(await w.handle(await w.review(pull, { state: "CHANGES_REQUESTED", body: "No." }))).toBe(
      "changes requested: gate only",
    );

    expect(await runOf(w, runId)).toMatchObject({ state: "review", current_pass: 1 });
    expect((await w.store.steps.get(stepId)).gate).toMatchObject({ status: "changes_requested", blockers: [WRITER] });
    expect(await w.store.guidance.queued(runId)).toEqual([]);
    expect(w.replies(pull)).toEqual([]);
  });
});

describe("the pull request closed", () => {
  it("while Lisa works on its step: that step's agents are stopped, and the run closes with its only pull request", async () => {
    const w = await world.begin();
    const { runId, stepId, pull = 0 } = await w.runAt("running", { pullRequest: true });

    expect(await w.handle(await w.closePull(pull))).toBe("pull request closed: gate closed");

    expect(w.log.stopped).toEqual([{ runId, stepId }]);
    expect(await runOf(w, runId)).toMatchObject({ state: "closed" });
    expect(await w.store.steps.get(stepId)).toMatchObject({ state: "dropped", pr_state: "closed" });
  });
});

describe('"Re-run" on Lisa\'s check', () => {
  /** Lisa's check run, failed, at a head of the step's own (the pull requests of other tests share the first one). */
  async function checkAtOwnHead(w: CommandWorld, stepId: number) {
    const step = await w.store.steps.get(stepId);
    // A commit of its own on the step's branch, made in the bare repository (no clone, no push).
    const gitDir = w.github.gitDir(CHECKS);
    const head = w.headOf(CHECKS);
    const tree = gitIn(gitDir, "rev-parse", `${head}^{tree}`).trim();
    const sha = gitIn(gitDir, "commit-tree", tree, "-p", head, "-m", `Fix the gates of ${step.branch}`).trim();
    gitIn(gitDir, "update-ref", `refs/heads/${step.branch}`, sha);
    await w.store.steps.record(stepId, { head_sha: sha });
    const check = await w.port.ensureCheckRun({ owner: "acme", repo: "checks" }, sha, CHECK_NAME, {
      conclusion: "failure",
      title: "npm test failed",
      summary: "1 test failed.",
    });
    return { sha, check: check ?? 0 };
  }

  it("runs the gates again at the head of a run waiting for review, through the worker", async () => {
    const w = await world.begin();
    const { runId, stepId } = await w.runAt("review", { pullRequest: true, repo: CHECKS });
    const { sha, check } = await checkAtOwnHead(w, stepId);

    expect(await w.handle(await w.rerequest(check, CHECKS))).toBe("gates run again");

    expect(w.log.reruns).toEqual([{ runId, stepId, headSha: sha, sender: WRITER }]);
  });

  it("is refused on a blocked run, said on top of what the check run showed", async () => {
    const w = await world.begin();
    const { stepId } = await w.runAt("blocked", { pullRequest: true, repo: CHECKS });
    const { check } = await checkAtOwnHead(w, stepId);

    expect(await w.handle(await w.rerequest(check, CHECKS))).toMatch(/^check re-run refused: the run is blocked/);

    expect(w.log.reruns).toEqual([]);
    const shown = w.github.checkRuns(CHECKS).find((c) => c.id === check);
    expect(shown?.output.summary).toBe(
      `**Lisa did not run the gates again:** the run is blocked; \`/lisa fix\` on the issue builds the blocked steps again, gates included. (@${WRITER} pressed Re-run.)\n\n1 test failed.`,
    );
    expect(shown?.conclusion).toBe("failure");
  });
});
