import { describe, expect, it } from "vitest";
import type { CommandGesture } from "../../src/commands/gesture.ts";
import { HELP } from "../../src/commands/help.ts";
import { trackingMarker } from "../../src/reporting/tracking-comment.ts";
import { READER, REPO, useCommandWorld, WRITER } from "../support/command-world.ts";

// What every `/lisa` command goes through before its own handler (on-command.ts): who may steer,
// where, the 👀 that says Lisa heard it, help, an unknown word, an issue without a run, a delivery
// handled twice; and `/lisa status`, answered there. No process, socket or worker: a store in memory
// and the emulator in this process, the gestures made from its payloads by Lisa's webhook handlers.

const world = useCommandWorld();

const commentIdOf = (gesture: unknown) => (gesture as CommandGesture).commentId ?? 0;
const eyesOn = (w: { github: { commentReactions(repo: string, id: number): { content: string; user: string }[] } }, id: number) =>
  w.github.commentReactions(REPO, id).filter((r) => r.content === "eyes" && r.user === "lisa[bot]");

describe("who may steer", () => {
  it("answers a reader's command politely and does nothing: no 👀, the run goes on, no session stopped", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");
    const asked = await w.comment(issue, "/lisa abort", READER);

    expect(await w.handle(asked)).toBe(`denied: ${READER} is not a writer`);

    expect(w.replies(issue)).toEqual([`@${READER}, only people with write access to this repository can steer Lisa.`]);
    expect(eyesOn(w, commentIdOf(asked.gesture))).toEqual([]);
    expect((await w.store.runs.get(runId))?.state).toBe("running");
    expect(w.log.stopped).toEqual([]);
  });

  it("answers a stranger the same way on a public repository (read access only)", async () => {
    const w = await world.begin();
    const issue = await w.issue();
    const asked = await w.comment(issue, "/lisa help", "someone-else");

    expect(await w.handle(asked)).toBe("denied: someone-else is not a writer");

    expect(w.replies(issue)).toEqual(["@someone-else, only people with write access to this repository can steer Lisa."]);
  });

  it("hears the repository's owner (admin), who is no collaborator", async () => {
    const w = await world.begin();
    const issue = await w.issue();

    expect(await w.handle(await w.comment(issue, "/lisa help", "acme"))).toBe("help");
  });
});

describe("where", () => {
  it("says on a pull request that is not one of Lisa's that it does nothing there, without a 👀", async () => {
    const w = await world.begin();
    const pull = await w.port.ensurePullRequest(
      { owner: "acme", repo: "api" },
      { title: "A person's change", body: "", head: "lisa-work", base: "main" },
    );
    const asked = await w.comment(pull.number, "/lisa status");
    expect(asked.gesture.isPullRequest).toBe(true);

    expect(await w.handle(asked)).toBe("not one of Lisa's pull requests");

    expect(w.replies(pull.number)).toEqual([
      "This pull request isn't one of Lisa's, so Lisa does nothing here. Comment on the issue instead.",
    ]);
    expect(eyesOn(w, commentIdOf(asked.gesture))).toEqual([]);
  });
});

describe("help and unknown commands", () => {
  it.each(["/lisa help", "/lisa"])("answers %j with the command list, and reacts 👀 to it", async (body) => {
    const w = await world.begin();
    const issue = await w.issue();
    const asked = await w.comment(issue, body);

    expect(await w.handle(asked)).toBe("help");

    expect(w.replies(issue)).toEqual([HELP]);
    expect(eyesOn(w, commentIdOf(asked.gesture))).toHaveLength(1);
  });

  it("answers a word it does not know with that word and the command list, and changes no run", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");
    const asked = await w.comment(issue, "/lisa frobnicate the widget");

    expect(await w.handle(asked)).toBe("unknown");

    expect(w.replies(issue)).toEqual([`Lisa does not know \`/lisa frobnicate\`.\n\n${HELP}`]);
    expect(HELP).toContain("`/lisa redirect <what to change>`");
    expect((await w.store.runs.get(runId))?.state).toBe("review");
    expect(await w.store.passes.of(runId)).toHaveLength(1);
  });

  it("says an issue without a run has none, for a command that needs one", async () => {
    const w = await world.begin();
    const issue = await w.issue();

    expect(await w.handle(await w.comment(issue, "/lisa retry"))).toBe("retry: no run");

    expect(w.replies(issue)).toEqual(["Lisa has no run for this issue. Add the label to start one."]);
  });
});

describe("a delivery handled twice (the worker stopped before marking it done)", () => {
  it("answers an unknown command once", async () => {
    const w = await world.begin();
    const issue = await w.issue();
    const asked = await w.comment(issue, "/lisa frobnicate");

    await w.handle(asked);
    await w.handle(asked);

    expect(w.replies(issue)).toHaveLength(1);
  });

  it("stops the run once and answers once: the second time finds it stopped and says nothing new", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");
    const asked = await w.comment(issue, "/lisa abort");

    expect(await w.handle(asked)).toBe("aborted");
    expect(await w.handle(asked)).toBe("abort refused in stopped");

    expect((await w.store.runs.get(runId))?.state).toBe("stopped");
    expect(w.log.stopped).toEqual([{ runId }]);
    expect(w.replies(issue)).toHaveLength(1);
    expect(w.replies(issue)[0]).toMatch(/^Stopped pass 1\./);
  });

  it("starts one next pass for a redirect, with its guidance once, and answers once", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");
    const asked = await w.comment(issue, "/lisa redirect use the v2 API");

    expect(await w.handle(asked)).toBe("pass 2 queued");
    await w.handle(asked);

    expect((await w.store.runs.get(runId))?.current_pass).toBe(2);
    expect(await w.store.passes.of(runId)).toHaveLength(2);
    expect((await w.store.guidance.ledger(runId)).map((g) => g.body)).toEqual(["use the v2 API"]);
    expect(await w.store.guidance.queued(runId)).toEqual([]);
    expect(w.replies(issue)).toEqual([`⏳ Pass 2 started by @${WRITER}'s redirect.`]);
  });
});

describe("/lisa status", () => {
  it("answers with the run's state, its pass and limit, and a link to the tracking comment", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("running");
    const trackingId = (await w.store.runs.get(runId))?.comment_id;
    expect(trackingId).toEqual(expect.any(Number));

    expect(await w.handle(await w.comment(issue, "/lisa status"))).toBe("status");

    const [reply] = w.replies(issue);
    expect(reply?.split("\n")[0]).toBe(
      `**Run ${runId} is working** · pass 1 of at most 5 · details in the [tracking comment](${w.github.url}/${REPO}/issues/${issue}#issuecomment-${trackingId})`,
    );
    expect((await w.store.runs.get(runId))?.state).toBe("running");
  });

  it("reads the gate from GitHub first: an approval whose webhook never came accepts the run, and the answer says so", async () => {
    const w = await world.begin();
    const { runId, issue, pull = 0 } = await w.runAt("review", { pullRequest: true });
    await w.github.submitReview(REPO, pull, { state: "APPROVED", user: WRITER });

    expect(await w.handle(await w.comment(issue, "/lisa status"))).toBe("status");

    expect((await w.store.runs.get(runId))?.state).toBe("accepted");
    expect(w.github.labels(REPO, issue)).toEqual(["lisa:accepted"]);
    const [reply] = w.replies(issue);
    expect(reply).toMatch(new RegExp(`^\\*\\*Run ${runId} is accepted\\*\\*`));
    expect(reply).toContain(`approved by @${WRITER}`);
  });

  it("links the tracking comment whose id Lisa never recorded, even when GitHub fails to read the gate", async () => {
    const w = await world.begin();
    const { runId, issue, pull = 0 } = await w.runAt("review", { pullRequest: true });
    // Lisa stopped between writing the tracking comment and recording its id: the store knows none.
    const [written] = w.github.comments(REPO, issue);
    await w.store.runs.recordTrackingComment(runId, null as never);
    w.github.injectFault({ method: "GET", path: new RegExp(`^/repos/acme/api/pulls/${pull}$`), kind: "server_error" });

    expect(await w.handle(await w.comment(issue, "/lisa status"))).toBe("status");

    expect((await w.store.runs.get(runId))?.comment_id).toBe(written?.id);
    expect(w.replies(issue)[0]?.split("\n")[0]).toBe(
      `**Run ${runId} is waiting for review** · pass 1 of at most 5 · details in the [tracking comment](${w.github.url}/${REPO}/issues/${issue}#issuecomment-${written?.id})`,
    );
    expect(w.github.comments(REPO, issue).filter((c) => c.body.includes(trackingMarker(runId)))).toHaveLength(1);
  });
});
