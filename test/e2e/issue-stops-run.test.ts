import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { RUN_STATES } from "../../src/store/transitions.ts";
import { isAlive } from "../support/process-alive.ts";
import { trackingBody } from "../support/tracking-body.ts";

// Rule 24 of the review-gates design, end to end: the Lisa label taken off the issue, or the issue
// closed, by a writer stops the run as `/lisa abort` does; by anyone else, or on a run with
// nothing under way, it changes nothing and says nothing.

const REPO = "acme/api";
const CONFIG = "label: lisa\ngates:\n  - test -f health.ts\n";
const DONE: FakeInvocation = {
  write: { "health.ts": "Add GET /health\n" },
  manifest: { title: "Add a health endpoint", what: "Add GET /health." },
  result: "done.",
};
const HANGS: FakeInvocation = { write: { "health.ts": "half\n" }, hang: true };

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** ann (write), bob (maintain) and tom (triage: may label and close issues, not a writer); ann labels an issue. */
async function labeled(invocations: FakeInvocation[]) {
  const agent = createFakeClaude(invocations);
  env = await startEmulatedLisa({ claudeBinary: agent.binary });
  const e = env;
  await e.github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: CONFIG });
  e.github.addCollaborator(REPO, "ann", "write");
  e.github.addCollaborator(REPO, "bob", "maintain");
  e.github.addCollaborator(REPO, "tom", "triage");
  const issue = await e.github.createIssue(REPO, { title: "Add a health endpoint", body: "Expose /health.", user: "ann" });
  await e.github.labelIssue(REPO, issue.number, "lisa", "ann");
  return { agent, e, issue: issue.number };
}

const runOf = async (e: EmulatedLisa) => {
  const [run] = await e.lisa.store.runs.inState(...RUN_STATES);
  if (!run) throw new Error("no run");
  return run;
};
/** Every webhook answered and every command it stored handled, while a run may still be working. */
const handled = async (e: EmulatedLisa) => {
  await e.github.waitForWebhooks();
  await waitFor("the stored commands to be handled", async () => (await e.lisa.store.commands.pending()) === 0);
};
/** What the worker made of the newest gesture it stored. */
const lastOutcome = async (e: EmulatedLisa) =>
  (await e.lisa.store.commands.gesturesBefore(Number.MAX_SAFE_INTEGER, 1))[0]?.outcome;
// The run has no pull request yet, and an aborted pass proposes nothing to continue with.
const STOPPED = "Stopped pass 1. Next: `/lisa redirect <guidance>` to start pass 2.";
const stoppedReplies = (e: EmulatedLisa, issue: number) => e.github.comments(REPO, issue).filter((c) => c.body.includes(STOPPED));

describe("rule 24: the issue unlabeled or closed", () => {
  it("by a writer who takes the label off, stops the pass under way as /lisa abort does; another label or a triager's close does nothing", async () => {
    const { agent, e, issue } = await labeled([HANGS]);
    const pids = await waitFor("pass 1's agent to start", () => agent.hangingPids());

    // Another label, even a writer's, is none of Lisa's business.
    await e.github.labelIssue(REPO, issue, "bug", "ann");
    await e.github.unlabelIssue(REPO, issue, "bug", "ann");
    await handled(e);
    expect((await runOf(e)).state).toBe("running");

    await e.github.closeIssue(REPO, issue, "tom");
    await handled(e);
    // Heard, and refused: tom may close issues but cannot write.
    expect(await lastOutcome(e)).toBe("issue closed: tom is not a writer");
    expect((await runOf(e)).state).toBe("running");
    expect(pids.every(isAlive)).toBe(true);

    await e.github.unlabelIssue(REPO, issue, "lisa", "bob");
    await handled(e);
    const run = await runOf(e);
    expect(run.state).toBe("stopped");
    await e.settle();
    expect((await e.lisa.store.passes.current(run.id))?.state).toBe("aborted");
    expect(pids.filter(isAlive)).toEqual([]);
    // The words of `/lisa abort`, once, as a reply to this delivery.
    expect(stoppedReplies(e, issue)).toHaveLength(1);
    expect(stoppedReplies(e, issue)[0]?.body).toMatch(/^<!-- lisa:reply delivery=[^>]+ -->\s*Stopped pass 1\./);
    expect(stoppedReplies(e, issue)[0]?.user.login).toBe("lisa[bot]");
    expect(trackingBody(e.github, REPO, issue)).toContain("⏹️ Stopped");
    // The session was stopped by a person, and the tracking comment says how.
    expect(trackingBody(e.github, REPO, issue)).toContain("stopped by @bob (took the label off the issue)");
    expect(e.github.labels(REPO, issue)).not.toContain("lisa:working");
  });

  it("by a writer who closes the issue, stops the pass under way; a bot taking the label off does nothing", async () => {
    const { agent, e, issue } = await labeled([HANGS]);
    const pids = await waitFor("pass 1's agent to start", () => agent.hangingPids());

    await e.github.unlabelIssue(REPO, issue, "lisa", "renovate[bot]");
    await handled(e);
    expect((await runOf(e)).state).toBe("running");
    expect(pids.every(isAlive)).toBe(true);

    await e.github.closeIssue(REPO, issue, "ann", "not_planned");
    await handled(e);
    expect((await runOf(e)).state).toBe("stopped");
    await e.settle();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(stoppedReplies(e, issue)).toHaveLength(1);
    expect(trackingBody(e.github, REPO, issue)).toContain("⏹️ Stopped");
    expect(trackingBody(e.github, REPO, issue)).toContain("stopped by @ann (closed the issue)");
  });

  it("says nothing and changes nothing when the run has nothing under way: waiting for review, or accepted", async () => {
    const { e, issue } = await labeled([DONE]);
    await e.settle();
    const [pull] = e.github.pulls(REPO);
    if (!pull) throw new Error("pass 1 opened no pull request");
    expect((await runOf(e)).state).toBe("review");
    const comments = () => e.github.comments(REPO, issue).length;
    const before = comments();

    await e.github.unlabelIssue(REPO, issue, "lisa", "ann");
    await e.settle();
    expect((await runOf(e)).state).toBe("review");
    expect(comments()).toBe(before);

    await e.github.submitReview(REPO, pull.number, { state: "APPROVED", body: "", user: "ann" });
    await e.settle();
    expect((await runOf(e)).state).toBe("accepted");
    const accepted = comments();
    await e.github.closeIssue(REPO, issue, "ann");
    await e.settle();
    expect((await runOf(e)).state).toBe("accepted");
    expect(comments()).toBe(accepted);
    expect(e.github.comments(REPO, issue).filter((c) => c.body.includes("nothing under way"))).toEqual([]);
  });
});
