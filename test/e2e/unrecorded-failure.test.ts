import { afterEach, describe, expect, it, vi } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { LocalClaims } from "../../src/scheduler/claims.ts";
import { trackingBody } from "../support/tracking-body.ts";

// A run's failure that a full data disk kept from the store is written by the worker later. The
// worker dropped it unwritten when it came to it while the run's execution was still winding down
// (here: releasing its claim, a database round trip on PostgreSQL), and a `/lisa retry` handled
// then was answered "nothing to retry", the store still saying running: the run was lost (issue 22).

const REPO = "acme/api";

let env: EmulatedLisa | undefined;
let releaseNow = () => {};
afterEach(async () => {
  releaseNow();
  vi.restoreAllMocks();
  await env?.stop();
  env = undefined;
});

describe("a failure the full data disk kept from the store", () => {
  it("is written, and /lisa retry resumes the run, when the retry comes while the run still winds down", async () => {
    const agent = createFakeClaude([
      { crash: true },
      { write: { "health.ts": "export const health = () => 'ok';\n" }, manifest: { title: "Add health", what: "Adds it." } },
    ]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github, lisa } = env;
    await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
    github.addCollaborator(REPO, "ann", "write");
    const issue = await github.createIssue(REPO, { title: "Add a health check", body: "", user: "ann" });

    // The disk fills as the run's failure is written: the store refuses that, and whatever follows.
    let full: boolean | undefined;
    const store = lisa.store;
    const diskFull = () => Object.assign(new Error("database or disk is full"), { code: "ERR_SQLITE_ERROR", errcode: 13 });
    const move = store.steps.move.bind(store.steps);
    vi.spyOn(store.steps, "move").mockImplementation((id, event, ...rest) => {
      if (event === "fail") full ??= true;
      if (full) throw diskFull();
      return move(id, event, ...rest);
    });
    const recordStep = store.steps.record.bind(store.steps);
    vi.spyOn(store.steps, "record").mockImplementation((id, fields) => {
      if (full) throw diskFull();
      return recordStep(id, fields);
    });
    const oweTracking = store.runs.oweTracking.bind(store.runs);
    vi.spyOn(store.runs, "oweTracking").mockImplementation((id, owed) => {
      if (full) throw diskFull();
      return oweTracking(id, owed);
    });
    const recordTrackingComment = store.runs.recordTrackingComment.bind(store.runs);
    vi.spyOn(store.runs, "recordTrackingComment").mockImplementation((id, commentId) => {
      if (full) throw diskFull();
      return recordTrackingComment(id, commentId);
    });
    // The failed run's claim is released only when the test says, after the retry was delivered.
    const released = new Promise<void>((resolve) => {
      releaseNow = resolve;
    });
    vi.spyOn(LocalClaims.prototype, "release").mockImplementation(() => released);

    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await waitFor("the run to fail", () => trackingBody(github, REPO, issue.number).includes("❌ Failed"), 60_000);
    expect(trackingBody(github, REPO, issue.number)).toContain("The agent session failed (crashed)");

    // Space is back; the retry comes while the run's execution has not let go of its claim.
    full = false;
    await github.commentOnIssue(REPO, issue.number, "/lisa retry", "ann");
    await github.waitForWebhooks();
    releaseNow();
    await env.settle();

    expect(github.comments(REPO, issue.number).map((c) => c.body)).not.toContainEqual(
      expect.stringContaining("nothing to retry"),
    );
    expect(agent.calls()).toHaveLength(2);
    expect(github.pulls(REPO)).toHaveLength(1);
    expect(await lisa.store.runs.inState("review")).toHaveLength(1);
  }, 120_000);
});
