import { describe, expect, it } from "vitest";
import { passMarker } from "../../src/reporting/review-package.ts";
import { BROKEN, type CommandWorld, ONE_PASS, READER, REPO, useCommandWorld, WRITER } from "../support/command-world.ts";

// `/lisa redirect` and `/lisa continue` (next-pass-commands.ts, request-pass.ts): the next pass now
// when the run waits, guidance joined or queued or steered into the pass under way otherwise, the
// plan made again when it waits for review, and the refusals. Driven through handleGesture with
// gestures made from the emulator's payloads, against a store in memory and the emulator in this process.

const world = useCommandWorld();

const runOf = (w: CommandWorld, runId: number) => w.store.runs.get(runId);
const passes = async (w: CommandWorld, runId: number) =>
  (await w.store.passes.of(runId)).map((p) => ({ number: p.number, state: p.state, trigger: p.trigger, by: p.requested_by }));
const guidanceOf = async (w: CommandWorld, runId: number, number: number) => {
  const pass = await w.store.passes.get(runId, number);
  return pass ? w.store.guidance.forPass(pass.id) : [];
};

describe("/lisa redirect", () => {
  it("on the issue of a run in review: pass 2 now, with the guidance, the label, and a reply", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:review"]);
    const asked = await w.comment(issue, "Looks close.\n/lisa redirect use the v2 API\nand keep v1 working");

    expect(await w.handle(asked)).toBe("pass 2 queued");

    expect(await runOf(w, runId)).toMatchObject({ state: "queued", current_pass: 2 });
    expect(await passes(w, runId)).toEqual([
      { number: 1, state: "superseded", trigger: "initial", by: "ann" },
      { number: 2, state: "queued", trigger: "redirect", by: WRITER },
    ]);
    const commentUrl = w.github.comments(REPO, issue).find((c) => c.user.login === WRITER)?.html_url;
    expect(await guidanceOf(w, runId, 2)).toMatchObject([
      {
        source: "command",
        author: WRITER,
        body: "use the v2 API\nand keep v1 working",
        pr_number: null,
        url: commentUrl,
        delivery_id: asked.deliveryId,
      },
    ]);
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:working"]);
    expect(w.replies(issue)).toEqual([`⏳ Pass 2 started by @${WRITER}'s redirect.`]);
  });

  it("without guidance asks what to change, and starts nothing", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");

    expect(await w.handle(await w.comment(issue, "/lisa redirect"))).toBe("redirect without guidance");

    expect(await runOf(w, runId)).toMatchObject({ state: "review", current_pass: 1 });
    expect(w.replies(issue)).toEqual(["Say what to change: `/lisa redirect <what to change>`."]);
  });

  it("on a pull request: takes the writers' inline comments since the last package, and opens the pass's comment there instead of a reply", async () => {
    const w = await world.begin();
    const { runId, stepId, pull = 0 } = await w.runAt("review", { pullRequest: true });
    expect(await w.inline(pull, { body: "Call it healthz, as the others." })).toBeNull();
    await w.inline(pull, { body: "I would return JSON.", user: READER });

    expect(await w.handle(await w.comment(pull, "/lisa redirect add a test for it"))).toBe("pass 2 queued");

    const writerInline = w.github.reviewComments(REPO, pull).find((c) => c.user.login === WRITER);
    expect(await guidanceOf(w, runId, 2)).toMatchObject([
      { source: "command", body: "add a test for it", owner: "acme", repo: "api", pr_number: pull },
      {
        source: "inline",
        author: WRITER,
        body: "Call it healthz, as the others.",
        path: "health.ts",
        line: 1,
        github_id: writerInline?.id,
      },
    ]);
    const passComment = w.github.comments(REPO, pull).filter((c) => c.body.includes(passMarker(runId, 2, stepId)));
    expect(passComment).toHaveLength(1);
    expect(w.replies(pull)).toEqual([]);
  });

  it("written inline as a reply in a thread: answers that thread, quoted after the guidance, at its line, with a 👀 on it", async () => {
    const w = await world.begin();
    const { runId, pull = 0 } = await w.runAt("review", { pullRequest: true });
    await w.inline(pull, { body: "Why a string here?", user: "acme" });
    const root = w.github.reviewComments(REPO, pull)[0]?.id ?? 0;
    const asked = await w.inline(pull, { body: "/lisa redirect return an object", inReplyTo: root });
    if (!asked) throw new Error("no command");

    expect(await w.handle(asked)).toBe("pass 2 queued");

    const command = w.github.reviewComments(REPO, pull).find((c) => c.body.startsWith("/lisa"));
    expect(await guidanceOf(w, runId, 2)).toMatchObject([
      {
        source: "command",
        body: "return an object\n\nThis answers the review thread on `health.ts`:\n\n> @acme: Why a string here?",
        path: "health.ts",
        line: 1,
        github_id: command?.id,
      },
    ]);
    expect(w.github.commentReactions(REPO, command?.id ?? 0)).toEqual([{ content: "eyes", user: "lisa[bot]" }]);
  });

  it("while the plan is not fixed (the pass queued): joins that pass, and says so", async () => {
    const w = await world.begin();
    const { runId, passId, issue } = await w.runAt("queued");

    expect(await w.handle(await w.comment(issue, "/lisa redirect use the v2 API"))).toBe("guidance joined the pass");

    expect(await runOf(w, runId)).toMatchObject({ state: "queued", current_pass: 1 });
    expect((await w.store.guidance.forPass(passId)).map((g) => g.body)).toEqual(["use the v2 API"]);
    expect(w.replies(issue)).toEqual(["Taken into pass 1: its plan is not fixed yet, so the plan will include it."]);
  });

  it("while the pass builds without an agent session (its gates run): queued for the next pass, and says so", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");

    expect(await w.handle(await w.comment(issue, "/lisa redirect use the v2 API"))).toBe("guidance queued");

    expect(await runOf(w, runId)).toMatchObject({ state: "running", current_pass: 1 });
    expect((await w.store.guidance.queued(runId)).map((g) => g.body)).toEqual(["use the v2 API"]);
    expect(w.replies(issue)).toEqual(["Queued for pass 2, after the current pass (1 request waiting)."]);
  });

  it("while an agent session of the pass runs: steers that session, bound to the pass under way", async () => {
    const w = await world.begin();
    const { runId, passId, stepId, issue } = await w.runAt("running");
    await w.store.steps.enterPhase(stepId, "agent");
    await w.store.sessions.start({ step_id: stepId, iteration: 1, purpose: "implement", provider: "claude", model: null });

    expect(await w.handle(await w.comment(issue, "/lisa redirect use the v2 API"))).toBe("guidance steered the running pass");

    expect((await w.store.guidance.forPass(passId)).map((g) => g.body)).toEqual(["use the v2 API"]);
    expect(await w.store.guidance.queued(runId)).toEqual([]);
    expect(w.replies(issue)).toEqual(["Taken into pass 1 while it runs: the running claude session reads it now."]);
  });

  it("on a plan waiting for review: the same pass plans again with it", async () => {
    const w = await world.begin();
    const { runId, passId, stepId, issue } = await w.runAt("plan_review");

    expect(await w.handle(await w.comment(issue, "/lisa redirect leave the web repository out"))).toBe("plan: planning again");

    expect(await runOf(w, runId)).toMatchObject({ state: "queued", current_pass: 1 });
    expect(await passes(w, runId)).toMatchObject([{ number: 1, state: "planning" }]);
    expect(await w.store.steps.get(stepId)).toMatchObject({ state: "pending", phase: "planning" });
    expect((await w.store.guidance.forPass(passId)).map((g) => g.body)).toEqual(["leave the web repository out"]);
    expect(w.replies(issue)).toEqual([`Lisa plans pass 1 again with @${WRITER}'s redirect.`]);
  });

  it("past limits.max_passes (read from the default branch now): refused, with what to do instead", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review", { repo: ONE_PASS });

    expect(await w.handle(await w.comment(issue, "/lisa redirect one more", WRITER, ONE_PASS))).toBe("max passes reached");

    expect(await runOf(w, runId)).toMatchObject({ state: "review", current_pass: 1 });
    expect(w.replies(issue, ONE_PASS)).toEqual([
      "Pass 1 of 1 is done (`limits.max_passes`). Approve the pull requests to accept them, raise the limit in `.github/lisa.yml`, or close them.",
    ]);
  });

  it("with an invalid config on the default branch: refused, saying why", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review", { repo: BROKEN });

    expect(await w.handle(await w.comment(issue, "/lisa redirect one more", WRITER, BROKEN))).toBe("config invalid");

    expect(await runOf(w, runId)).toMatchObject({ state: "review", current_pass: 1 });
    const [reply] = w.replies(issue, BROKEN);
    expect(reply).toMatch(/^Lisa cannot start another pass: `\.github\/lisa\.yml` is not valid:/);
    expect(reply).toMatch(/Fix the file on the default branch and ask again\.$/);
  });

  it("on a run that has ended: refused, pointing at the label", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("closed");

    expect(await w.handle(await w.comment(issue, "/lisa redirect one more"))).toBe("run ended");

    expect(await runOf(w, runId)).toMatchObject({ state: "closed", current_pass: 1 });
    expect(w.replies(issue)).toEqual([
      `Run ${runId} has ended (closed). Add the \`lisa\` label to the issue again to start a new one.`,
    ]);
  });

  it("on a failed run: starts the next pass instead of a retry", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("failed");

    expect(await w.handle(await w.comment(issue, "/lisa redirect try another way"))).toBe("pass 2 queued");

    expect(await runOf(w, runId)).toMatchObject({ state: "queued", current_pass: 2 });
    expect(await w.store.steps.of(runId)).toMatchObject([{ state: "failed" }]);
  });
});

describe("/lisa continue", () => {
  it("starts pass 2 with the refinements the agent proposed, each a piece of guidance", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review", { refinements: ["Add a test for /health", "Log the latency"] });

    expect(await w.handle(await w.comment(issue, "/lisa continue"))).toBe("pass 2 queued");

    expect(await passes(w, runId)).toMatchObject([
      { number: 1, state: "superseded" },
      { number: 2, state: "queued", trigger: "continue", by: WRITER },
    ]);
    expect((await guidanceOf(w, runId, 2)).map((g) => [g.source, g.author, g.body])).toEqual([
      ["continue", WRITER, "Add a test for /health"],
      ["continue", WRITER, "Log the latency"],
    ]);
    expect(w.replies(issue)).toEqual([`⏳ Pass 2 started by @${WRITER}'s continue.`]);
  });

  it("without refinements: refused, pointing at redirect", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");

    expect(await w.handle(await w.comment(issue, "/lisa continue"))).toBe("continue without refinements");

    expect(await runOf(w, runId)).toMatchObject({ state: "review", current_pass: 1 });
    expect(w.replies(issue)).toEqual([
      "The agent proposed no refinements in pass 1; say what to change with `/lisa redirect <what to change>`.",
    ]);
  });
});
