import { describe, expect, it } from "vitest";
import * as changes from "../../src/store/run-changes.ts";
import { BROKEN, type CommandWorld, ONE_PASS, OTHER, READER, REPO, useCommandWorld, WRITER } from "../support/command-world.ts";

// The commands that move a run without starting a pass (run-control-commands.ts), and the issue
// closed or unlabeled, which stops a run as `/lisa abort` does (on-issue-change.ts): each driven
// through handleGesture with a gesture made from the emulator's payload, against a store in memory
// and the emulator in this process. What changed in the store, and what Lisa wrote on GitHub.

const world = useCommandWorld();

const stateOf = async (w: CommandWorld, runId: number) => (await w.store.runs.get(runId))?.state;
const stepStates = async (w: CommandWorld, runId: number) => (await w.store.steps.of(runId)).map((s) => s.state);
const passOf = async (w: CommandWorld, runId: number) => (await w.store.passes.current(runId))?.state;
const lastChange = async (w: CommandWorld, runId: number) => (await w.store.events.of(runId)).filter((e) => e.to_state).at(-1);

describe("/lisa abort", () => {
  it("stops a running run: the run stopped, its pass aborted, its step skipped, the agents stopped, and the next choices said", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:working"]);

    expect(await w.handle(await w.comment(issue, "/lisa abort"))).toBe("aborted");

    expect(await stateOf(w, runId)).toBe("stopped");
    expect(await passOf(w, runId)).toBe("aborted");
    expect(await stepStates(w, runId)).toEqual(["skipped"]);
    expect(w.log.stopped).toEqual([{ runId }]);
    expect(await lastChange(w, runId)).toMatchObject({ to_state: "stopped", actor: WRITER, detail: "/lisa abort" });
    expect(w.github.labels(REPO, issue)).toEqual([]);
    expect(w.replies(issue)).toEqual(["Stopped pass 1. Next: `/lisa redirect <guidance>` to start pass 2."]);
  });

  it("stops a blocked run and offers its open pull request to approve or close", async () => {
    const w = await world.begin();
    const { runId, issue, pull } = await w.runAt("blocked", { pullRequest: true });

    expect(await w.handle(await w.comment(issue, "/lisa abort"))).toBe("aborted");

    expect(await stateOf(w, runId)).toBe("stopped");
    expect(w.replies(issue)[0]).toMatch(/^Stopped pass 1\. Next: `\/lisa redirect <guidance>` to start pass 2; approve /);
    expect(w.replies(issue)[0]).toContain(`acme/api#${pull}`);
    expect(w.replies(issue)[0]).toContain("to accept it as it stands, or close it to end the run.");
  });

  it("says a pass that was the last cannot be followed by a redirect (the run's own limits.max_passes)", async () => {
    const w = await world.begin();
    const { issue } = await w.runAt("running", { config: { limits: { max_passes: 1 } } });

    await w.handle(await w.comment(issue, "/lisa abort"));

    expect(w.replies(issue)).toEqual([
      "Stopped pass 1. Next: pass 1 of 1 was the last: raise `limits.max_passes` in `.github/lisa.yml` for another.",
    ]);
  });

  it("refuses a run with nothing under way (waiting for review), and stops no agent", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");

    expect(await w.handle(await w.comment(issue, "/lisa abort"))).toBe("abort refused in review");

    expect(await stateOf(w, runId)).toBe("review");
    expect(await passOf(w, runId)).toBe("at_gate");
    expect(w.log.stopped).toEqual([]);
    expect(w.replies(issue)).toEqual([`Run ${runId} is waiting for review; there is nothing under way to stop.`]);
  });
});

describe("/lisa fix", () => {
  it("queues a blocked run's blocked step again with a fresh budget, the notes as guidance of the same pass", async () => {
    const w = await world.begin();
    const { runId, passId, issue } = await w.runAt("blocked");
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:blocked"]);

    expect(await w.handle(await w.comment(issue, "/lisa fix try the slower parser"))).toBe("fix: 1 step(s) queued again");

    expect(await stateOf(w, runId)).toBe("queued");
    expect(await passOf(w, runId)).toBe("building");
    expect(await w.store.steps.of(runId)).toMatchObject([{ state: "pending", phase: "workspace" }]);
    expect(await w.store.guidance.forPass(passId)).toMatchObject([
      { source: "fix", author: WRITER, body: "try the slower parser", pr_number: null },
    ]);
    expect(await lastChange(w, runId)).toMatchObject({ to_state: "queued", actor: WRITER });
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:working"]);
    expect(w.replies(issue)).toEqual([]);
  });

  it("adds no guidance without notes", async () => {
    const w = await world.begin();
    const { runId, passId, issue } = await w.runAt("blocked");

    await w.handle(await w.comment(issue, "/lisa fix"));

    expect(await stateOf(w, runId)).toBe("queued");
    expect(await w.store.guidance.forPass(passId)).toEqual([]);
  });

  it("on a pull request, queues that step only: the other blocked step stays blocked", async () => {
    const w = await world.begin();
    const { runId, stepId, otherStepId, pull = 0 } = await w.runAt("blocked", { twoSteps: true, pullRequest: true });

    expect(await w.handle(await w.comment(pull, "/lisa fix"))).toBe("fix: 1 step(s) queued again");

    const steps = await w.store.steps.of(runId);
    expect(steps.find((s) => s.id === stepId)?.state).toBe("pending");
    expect(steps.find((s) => s.id === otherStepId)?.state).toBe("blocked");
  });

  it("on a pull request whose step is not blocked (skipped before), says nothing is blocked there", async () => {
    const w = await world.begin();
    const { runId, pull = 0 } = await w.runAt("blocked", { twoSteps: true, pullRequest: true });
    await w.handle(await w.comment(pull, "/lisa skip"));

    expect(await w.handle(await w.comment(pull, "/lisa fix"))).toBe("fix: nothing blocked");

    expect(await stateOf(w, runId)).toBe("blocked");
    expect(w.replies(pull).at(-1)).toBe("Nothing is blocked here.");
  });

  it("on a run waiting for review, answers that there is nothing to retry", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");

    expect(await w.handle(await w.comment(issue, "/lisa fix"))).toBe(`retry: run ${runId} is review`);

    expect(await stateOf(w, runId)).toBe("review");
    expect(w.replies(issue)).toEqual(["The latest run is waiting for review, so there is nothing to retry."]);
  });
});

describe("/lisa skip", () => {
  it("leaves a blocked run's blocked step out and sends the pass on to review", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("blocked");

    expect(await w.handle(await w.comment(issue, "/lisa skip"))).toBe("skip: the pass goes on to review");

    expect(await stateOf(w, runId)).toBe("queued");
    expect(await passOf(w, runId)).toBe("ascending");
    expect(await stepStates(w, runId)).toEqual(["skipped"]);
    expect(await lastChange(w, runId)).toMatchObject({ to_state: "queued", actor: WRITER });
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:working"]);
  });

  it("on a pull request, skips that step only: the run stays blocked on the other, and the tracking comment says so", async () => {
    const w = await world.begin();
    const { runId, issue, stepId, otherStepId, pull = 0 } = await w.runAt("blocked", { twoSteps: true, pullRequest: true });
    const before = w.mark();

    expect(await w.handle(await w.comment(pull, "/lisa skip"))).toBe("skip: one step skipped, others still blocked");

    expect(await stateOf(w, runId)).toBe("blocked");
    expect(await passOf(w, runId)).toBe("blocked");
    const steps = await w.store.steps.of(runId);
    expect(steps.find((s) => s.id === stepId)?.state).toBe("skipped");
    expect(steps.find((s) => s.id === otherStepId)?.state).toBe("blocked");
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:blocked"]);
    expect(w.writesSince(before)).toContain("PATCH /repos/:owner/:repo/issues/comments/:id");
  });

  it("on a pull request whose step is not blocked (another is), says so and skips nothing", async () => {
    const w = await world.begin();
    const { runId, passId, stepId, otherStepId = 0, pull = 0 } = await w.runAt("running", { twoSteps: true, pullRequest: true });
    await w.store.steps.move(stepId, "deliver");
    await w.store.steps.move(otherStepId, "block");
    await changes.blockRun(w.store, runId, passId);

    expect(await w.handle(await w.comment(pull, "/lisa skip"))).toBe("skip: nothing blocked");

    expect(await stateOf(w, runId)).toBe("blocked");
    expect(await stepStates(w, runId)).toEqual(["delivered", "blocked"]);
    expect(w.replies(pull)).toEqual(["Nothing is blocked here, so there is nothing to skip."]);
  });

  it("refuses a run that is not blocked", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");
    const before = await stepStates(w, runId);

    expect(await w.handle(await w.comment(issue, "/lisa skip"))).toBe("skip: nothing blocked");

    expect(await stateOf(w, runId)).toBe("running");
    expect(await stepStates(w, runId)).toEqual(before);
    expect(w.replies(issue)).toEqual(["Nothing is blocked here, so there is nothing to skip."]);
  });
});

describe("/lisa retry (and /lisa fix on a failed run)", () => {
  it.each(["retry", "fix"])(
    "/lisa %s queues a failed run again at its failed step, under the default branch's config now, with a 🚀",
    async (word) => {
      const w = await world.begin();
      const { runId, issue } = await w.runAt("failed", { repo: ONE_PASS });
      expect(await stepStates(w, runId)).toEqual(["failed"]);

      expect(await w.handle(await w.comment(issue, `/lisa ${word}`, WRITER, ONE_PASS))).toBe(`retry: run ${runId} queued again`);

      const run = await w.store.runs.get(runId);
      expect(run).toMatchObject({ state: "queued", error: null, config: { limits: { max_passes: 1 } } });
      expect(await stepStates(w, runId)).toEqual(["pending"]);
      expect(await lastChange(w, runId)).toMatchObject({ to_state: "queued", actor: WRITER });
      expect(w.github.reactions(ONE_PASS, issue)).toEqual([{ content: "rocket", user: "lisa[bot]" }]);
      expect(w.replies(issue, ONE_PASS)).toEqual([]);
    },
  );

  it("refuses when the default branch's config is invalid, saying why, and the run stays failed", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("failed", { repo: BROKEN });

    expect(await w.handle(await w.comment(issue, "/lisa retry", WRITER, BROKEN))).toBe("retry: config invalid");

    expect(await stateOf(w, runId)).toBe("failed");
    expect(await stepStates(w, runId)).toEqual(["failed"]);
    const [reply] = w.replies(issue, BROKEN);
    expect(reply).toMatch(/^Lisa cannot retry: `\.github\/lisa\.yml` is not valid:/);
    expect(reply).toContain("max_passes");
    expect(w.github.reactions(BROKEN, issue)).toEqual([]);
  });

  it("refuses a run that did not fail", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("stopped");

    expect(await w.handle(await w.comment(issue, "/lisa retry"))).toBe(`retry: run ${runId} is stopped`);

    expect(await stateOf(w, runId)).toBe("stopped");
    expect(w.replies(issue)).toEqual(["The latest run is stopped, so there is nothing to retry."]);
    expect(w.github.reactions(REPO, issue)).toEqual([]);
  });
});

describe("/lisa proceed", () => {
  it("builds the plan that waited for review", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("plan_review");
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:review"]);

    expect(await w.handle(await w.comment(issue, "/lisa proceed"))).toBe("proceed: building the plan");

    expect(await stateOf(w, runId)).toBe("queued");
    expect(await passOf(w, runId)).toBe("building");
    expect(await lastChange(w, runId)).toMatchObject({ to_state: "queued", actor: WRITER });
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:working"]);
  });

  it("refuses a run with no plan waiting", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");

    expect(await w.handle(await w.comment(issue, "/lisa proceed"))).toBe("proceed: nothing waits");

    expect(await stateOf(w, runId)).toBe("running");
    expect(w.replies(issue)).toEqual(["`/lisa proceed` is for a plan waiting for review; this run has none waiting."]);
  });
});

describe("/lisa accept", () => {
  it.each(["review", "stopped"] as const)(
    "accepts a run in %s without approvals: the pass decided by override, the label, the final report",
    async (state) => {
      const w = await world.begin();
      const { runId, issue } = await w.runAt(state);

      expect(await w.handle(await w.comment(issue, "/lisa accept"))).toBe("accepted by override");

      expect(await stateOf(w, runId)).toBe("accepted");
      expect(await w.store.passes.current(runId)).toMatchObject({
        decision: "accept",
        decided_by: WRITER,
        decided_via: "/lisa accept",
      });
      expect(w.github.labels(REPO, issue)).toEqual(["lisa:accepted"]);
      const report = w.github.comments(REPO, issue).find((c) => c.body.includes(`<!-- lisa:report run=${runId}`));
      expect(report?.body).toContain("/lisa accept");
    },
  );

  it("is refused on a pull request: it accepts the whole run, from the issue", async () => {
    const w = await world.begin();
    const { runId, pull = 0 } = await w.runAt("review", { pullRequest: true });

    expect(await w.handle(await w.comment(pull, "/lisa accept"))).toBe("accept on a PR");

    expect(await stateOf(w, runId)).toBe("review");
    expect(w.replies(pull)).toEqual([
      "`/lisa accept` accepts the whole run: comment it on the issue. To accept this pull request, approve it.",
    ]);
  });

  it("is refused while a pass is under way", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");

    expect(await w.handle(await w.comment(issue, "/lisa accept"))).toBe("accept refused in running");

    expect(await stateOf(w, runId)).toBe("running");
    expect(w.replies(issue)).toEqual([`Run ${runId} is working; \`/lisa accept\` works when it waits for review.`]);
  });

  it("needs write on every repository with an open pull request of the run", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review", { twoSteps: true });

    expect(await w.handle(await w.comment(issue, "/lisa accept"))).toBe("accept denied");

    expect(await stateOf(w, runId)).toBe("review");
    expect(await w.store.passes.current(runId)).toMatchObject({ state: "at_gate", decision: null });
    expect(w.replies(issue)).toEqual([`@${WRITER}, accepting needs write access to ${OTHER} too.`]);
  });
});

describe("the issue closed or its label taken off (as /lisa abort)", () => {
  it("stops a running run when a writer closes the issue, and says so", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");

    expect(await w.handle(await w.closeIssue(issue))).toBe("aborted");

    expect(await stateOf(w, runId)).toBe("stopped");
    expect(w.log.stopped).toEqual([{ runId }]);
    expect(await lastChange(w, runId)).toMatchObject({ to_state: "stopped", actor: WRITER, detail: "closed the issue" });
    expect(w.replies(issue)).toEqual(["Stopped pass 1. Next: `/lisa redirect <guidance>` to start pass 2."]);
  });

  it("stops a running run when a writer takes the Lisa label off", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");
    await w.github.labelIssue(REPO, issue, "lisa", WRITER);

    expect(await w.handle(await w.unlabel(issue, "lisa"))).toBe("aborted");

    expect(await stateOf(w, runId)).toBe("stopped");
    expect(await lastChange(w, runId)).toMatchObject({ actor: WRITER, detail: "took the label off the issue" });
  });

  it("changes nothing for another label taken off", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");

    expect(await w.handle(await w.unlabel(issue, "lisa:working"))).toBe("issue unlabeled: another label");

    expect(await stateOf(w, runId)).toBe("running");
    expect(w.log.stopped).toEqual([]);
  });

  it("changes nothing, without a word, when a reader closes the issue", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");

    expect(await w.handle(await w.closeIssue(issue, READER))).toBe(`issue closed: ${READER} is not a writer`);

    expect(await stateOf(w, runId)).toBe("running");
    expect(w.log.stopped).toEqual([]);
    expect(w.replies(issue)).toEqual([]);
  });

  it("leaves a run waiting for review as it is, without a word", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");

    expect(await w.handle(await w.closeIssue(issue))).toBe(`issue closed: run ${runId} is review, nothing to stop`);

    expect(await stateOf(w, runId)).toBe("review");
    expect(w.replies(issue)).toEqual([]);
  });
});
