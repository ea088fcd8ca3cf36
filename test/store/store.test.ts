import { describe, expect, it } from "vitest";
import { type NewRun, Store } from "../../src/store/store.ts";

const newRun = (issue: number): NewRun => ({
  installation_id: 2,
  owner: "acme",
  repo: "api",
  issue_number: issue,
  issue_title: "Title",
  issue_body: "",
  requested_by: "alice",
  config: "{}",
});
const step = [{ position: 1, owner: "acme", repo: "api", branch: "lisa/1-title", baseBranch: "main", scope: null }];

describe("Store", () => {
  it("records a webhook command once per delivery id", () => {
    const store = new Store(":memory:");
    expect(store.addCommand("d1", "start_run", { a: 1 })).toBe(true);
    expect(store.addCommand("d1", "start_run", { a: 1 })).toBe(false);
    expect(store.nextCommand()?.delivery_id).toBe("d1");
  });

  it("allows one open run per issue, and a new one once it has ended", () => {
    const store = new Store(":memory:");
    const first = store.createRun(newRun(1), step);
    expect(first?.state).toBe("queued");
    expect(store.createRun(newRun(1), step)).toBeUndefined();
    expect(store.createRun(newRun(2), step)?.issue_number).toBe(2);

    store.transitionRun(first?.id ?? 0, "claim");
    store.transitionRun(first?.id ?? 0, "fail");
    // A failed run is still open: `/lisa retry` resumes it.
    expect(store.createRun(newRun(1), step)).toBeUndefined();
    store.transitionRun(first?.id ?? 0, "close");
    expect(store.createRun(newRun(1), step)?.state).toBe("queued");
  });

  it("claims queued runs oldest first", () => {
    const store = new Store(":memory:");
    store.createRun(newRun(1), step);
    store.createRun(newRun(2), step);
    expect(store.claimRun()?.issue_number).toBe(1);
    expect(store.claimRun()?.issue_number).toBe(2);
    expect(store.claimRun()).toBeUndefined();
  });

  it("sums agent cost over a run's sessions and interrupts the running ones", () => {
    let now = 1_000;
    const store = new Store(":memory:", () => now);
    const run = store.createRun(newRun(1), step);
    const [firstStep] = store.steps(run?.id ?? 0);
    const stepId = firstStep?.id ?? 0;
    const done = store.startSession({ step_id: stepId, iteration: 1, purpose: "implement", provider: "claude", model: null });
    store.finishSession(done, { state: "succeeded", cost_usd: 0.25, turns: 3, failure_kind: null, message: null });
    const running = store.startSession({ step_id: stepId, iteration: 2, purpose: "fix_gates", provider: "claude", model: null });
    store.recordSessionPid(running, 4242);
    now = 2_000;

    expect(store.runCost(run?.id ?? 0)).toBe(0.25);
    expect(store.interruptRunningSessions().map((s) => [s.id, s.pid])).toEqual([[running, 4242]]);
    expect(store.sessions(stepId).map((s) => [s.state, s.finished_at])).toEqual([
      ["succeeded", 1_000],
      ["interrupted", 2_000],
    ]);
  });
});
