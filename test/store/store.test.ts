import { afterEach, describe, expect, it, vi } from "vitest";
import { testDatabaseUrl, testStoreLocation } from "../../dev/test-database.ts";
import { Database } from "../../src/store/database.ts";
import { render } from "../../src/store/sql.ts";
import { type NewGuidance, Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { buildThrough, newRun, oneStep } from "../support/store-fixtures.ts";

const step = oneStep(1);

afterEach(() => {
  vi.restoreAllMocks();
});

/** The text of each write the store sends from now on, whichever store it is. */
function writesOf(): string[] {
  const texts: string[] = [];
  const statements = Database.prototype.statements;
  vi.spyOn(Database.prototype, "statements").mockImplementation(function (this: Database) {
    const open = statements.call(this);
    return {
      all: (query) => open.all(query),
      run: (query) => {
        texts.push(render(query, () => "?"));
        return open.run(query);
      },
    };
  });
  return texts;
}

/** An empty store: SQLite in memory, or a schema of its own on PostgreSQL (npm run test:postgres). */
const freshStore = () => testDatabaseUrl(tempDir("store")) ?? ":memory:";

describe("Store", () => {
  it("records a webhook command once per delivery id", async () => {
    const store = new Store(freshStore());
    const id = await store.commands.add("d1", "start_run", { a: 1 });
    expect(await store.commands.add("d1", "start_run", { a: 1 })).toBeUndefined();
    expect((await store.commands.ready()).map((c) => [c.id, c.delivery_id])).toEqual([[id, "d1"]]);
    expect((await store.commands.get(id ?? 0))?.delivery_id).toBe("d1");
  });

  it("writes the commands of webhooks that arrive together with one INSERT, in the order they arrived", async () => {
    const store = new Store(freshStore());
    const written = writesOf();
    const deliveries = ["d1", "d2", "d3", "d4", "d5"];
    const ids = await Promise.all(deliveries.map((id) => store.commands.add(id, "start_run", { id })));
    // One commit for a flood's arrivals, not one each (SQLite syncs its log at each).
    expect(written.filter((text) => text.startsWith("INSERT INTO commands"))).toHaveLength(1);
    expect(ids.every((id, i) => typeof id === "number" && (i === 0 || id > (ids[i - 1] ?? 0)))).toBe(true);
    expect((await store.commands.ready()).map((c) => [c.id, c.delivery_id])).toEqual(ids.map((id, i) => [id, deliveries[i]]));
  });

  it("records a delivery, or an event, once when it arrives twice together", async () => {
    const store = new Store(freshStore());
    await store.commands.add("before", "gesture", {});
    const ids = await Promise.all([
      store.commands.add("d1", "gesture", {}, "e1"),
      store.commands.add("d1", "gesture", {}, "e1"),
      store.commands.add("d2", "gesture", {}, "e1"),
      store.commands.add("before", "gesture", {}),
      store.commands.add("d3", "gesture", {}, "e3"),
    ]);
    expect(ids.map((id) => id !== undefined)).toEqual([true, false, false, false, true]);
    expect((await store.commands.ready()).map((c) => c.delivery_id)).toEqual(["before", "d1", "d3"]);
  });

  it("lists the commands before one, newest first, and when each was answered", async () => {
    let clock = 1_000;
    const store = new Store(freshStore(), () => clock);
    for (const id of ["d1", "d2", "d3"]) await store.commands.add(id, "gesture", {});
    const [first] = await store.commands.ready();
    clock = 1_500;
    await store.commands.finish(first?.id ?? 0, "done");
    expect((await store.commands.gesturesBefore(3, 10)).map((c) => [c.delivery_id, c.finished_at])).toEqual([
      ["d2", null],
      ["d1", 1_500],
    ]);
    expect(await store.commands.gesturesBefore(3, 1)).toHaveLength(1);
  });

  it("tells whether an issue's run came to rest between two times", async () => {
    let clock = 1_000;
    const store = new Store(freshStore(), () => clock);
    const run = await store.runs.create(newRun(1), step);
    clock = 2_000;
    await store.runs.transition(run?.id ?? 0, "claim");
    expect(await store.runs.cameToRest("acme", "api", 1, 0, 5_000)).toBe(false);
    clock = 3_000;
    await store.runs.transition(run?.id ?? 0, "fail");
    expect(await store.runs.cameToRest("acme", "api", 1, 2_500, 3_000)).toBe(true);
    expect(await store.runs.cameToRest("acme", "api", 1, 3_000, 5_000)).toBe(false);
    expect(await store.runs.cameToRest("acme", "api", 2, 0, 5_000)).toBe(false);
  });

  it("allows one open run per issue, and a new one once it has ended", async () => {
    const store = new Store(freshStore());
    const first = await store.runs.create(newRun(1), step);
    expect(first?.state).toBe("queued");
    expect(await store.runs.create(newRun(1), step)).toBeUndefined();
    expect((await store.runs.create(newRun(2), step))?.issue_number).toBe(2);

    await store.runs.transition(first?.id ?? 0, "claim");
    await store.runs.transition(first?.id ?? 0, "fail");
    // A failed run is still open: `/lisa retry` resumes it.
    expect(await store.runs.create(newRun(1), step)).toBeUndefined();
    await store.runs.transition(first?.id ?? 0, "close");
    expect((await store.runs.create(newRun(1), step))?.state).toBe("queued");
  });

  it("claims queued runs oldest first", async () => {
    const store = new Store(freshStore());
    await store.runs.create(newRun(1), step);
    await store.runs.create(newRun(2), step);
    expect((await store.runs.claim("w1"))?.issue_number).toBe(1);
    expect((await store.runs.claim("w1"))?.issue_number).toBe(2);
    expect(await store.runs.claim("w1")).toBeUndefined();
  });

  it("sums agent cost over a run's sessions and interrupts the running ones", async () => {
    let now = 1_000;
    const store = new Store(freshStore(), () => now);
    const run = await store.runs.create(newRun(1), step);
    const [firstStep] = await store.steps.of(run?.id ?? 0);
    const stepId = firstStep?.id ?? 0;
    const done = await store.sessions.start({
      step_id: stepId,
      iteration: 1,
      purpose: "implement",
      provider: "claude",
      model: null,
    });
    await store.sessions.finish(done, { state: "succeeded", cost_usd: 0.25, turns: 3, failure_kind: null, message: null });
    const running = await store.sessions.start({
      step_id: stepId,
      iteration: 2,
      purpose: "fix_gates",
      provider: "claude",
      model: null,
    });
    await store.sessions.recordPid(running, 4242, "boot-1:98765");
    now = 2_000;

    expect(await store.runs.cost(run?.id ?? 0)).toBe(0.25);
    expect((await store.sessions.interruptAll()).map((s) => [s.id, s.pid, s.pid_identity])).toEqual([
      [running, 4242, "boot-1:98765"],
    ]);
    expect((await store.sessions.of(stepId)).map((s) => [s.state, s.finished_at])).toEqual([
      ["succeeded", 1_000],
      ["interrupted", 2_000],
    ]);
    // The session that was still running when it was marked interrupted ends so, whatever it reports after.
    await store.sessions.finish(running, {
      state: "failed",
      cost_usd: 0,
      turns: null,
      failure_kind: "crashed",
      message: "killed",
    });
    expect((await store.sessions.of(stepId)).at(-1)?.state).toBe("interrupted");
  });
});

/** A store whose clock moves one second per reading, so every write has its own time. */
const ticking = () => {
  let now = 1_000_000;
  return new Store(freshStore(), () => (now += 1_000));
};

/** A single-repository run, claimed, whose first pass reached the gate. */
const runInReview = async (store: Store, issue = 1) => {
  const run = await store.runs.create(newRun(issue), step);
  const id = run?.id ?? 0;
  await store.runs.transition(id, "claim");
  const pass = (await store.passes.current(id))?.id ?? 0;
  for (const event of ["start", "planned", "built", "gate_open"] as const) await store.passes.transition(pass, event);
  await store.runs.transition(id, "gate_open");
  return id;
};

const guidance = (deliveryId: string, body: string, githubId: number | null = null): NewGuidance => ({
  delivery_id: deliveryId,
  source: githubId === null ? "command" : "inline",
  owner: "acme",
  repo: "api",
  pr_number: 5,
  author: "bob",
  url: null,
  github_id: githubId,
  path: githubId === null ? null : "src/api.ts",
  line: githubId === null ? null : 42,
  diff_hunk: null,
  outdated: 0,
  body,
});

describe("store.runs.transition", () => {
  it("moves a run along the table and logs the event with who and why", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    expect((await store.runs.transition(id, "claim"))?.state).toBe("running");
    expect((await store.runs.transition(id, "abort", { actor: "ann", note: "/lisa abort" }))?.state).toBe("stopped");
    expect((await store.events.of(id)).map((e) => [e.kind, e.from_state, e.to_state, e.actor, e.detail, e.pass])).toEqual([
      ["run_created", null, "queued", "alice", null, 1],
      ["claim", "queued", "running", null, null, 1],
      ["abort", "running", "stopped", "ann", "/lisa abort", 1],
    ]);
  });

  it("refuses an event the table does not allow from the current state, and writes nothing", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    const before = await store.runs.get(id);
    expect(await store.runs.transition(id, "accept", { actor: "ann" })).toBeUndefined();
    expect(await store.runs.transition(id, "gate_open")).toBeUndefined();
    expect(await store.runs.get(id)).toEqual(before);
    expect((await store.events.of(id)).map((e) => e.kind)).toEqual(["run_created"]);
  });

  it("refuses every event once the run has ended", async () => {
    const store = ticking();
    const id = await runInReview(store);
    expect((await store.runs.transition(id, "merge"))?.state).toBe("merged");
    expect(await store.runs.transition(id, "next_pass")).toBeUndefined();
    expect(await store.runs.transition(id, "withdraw")).toBeUndefined();
    expect((await store.runs.get(id))?.state).toBe("merged");
  });

  it("returns undefined for a run that does not exist", async () => {
    expect(await ticking().runs.transition(42, "claim")).toBeUndefined();
  });

  it("sets finished_at only when a run ends, and clears it when it goes on", async () => {
    const store = ticking();
    const id = await runInReview(store);
    expect((await store.runs.get(id))?.finished_at).toBeNull();
    expect((await store.runs.transition(id, "accept"))?.finished_at).toBeNull();
    expect((await store.runs.transition(id, "close"))?.finished_at).toEqual(expect.any(Number));
  });

  it("compares and sets: a second writer deciding from the same state is refused", async () => {
    const file = testStoreLocation(tempDir("cas"));
    const worker = new Store(file);
    const commands = new Store(file);
    const id = await runInReview(worker);
    // Both saw the run in review; the worker's redirect wins, the command's accept is refused.
    expect((await commands.runs.get(id))?.state).toBe("review");
    expect((await worker.runs.transition(id, "next_pass"))?.state).toBe("queued");
    expect(await commands.runs.transition(id, "accept")).toBeUndefined();
    expect((await commands.events.of(id)).map((e) => e.kind)).toEqual(["run_created", "claim", "gate_open", "next_pass"]);
    await worker.close();
    await commands.close();
  });
});

describe("Store: what GitHub shows of a run", () => {
  /** A run moved from queued through running to review; the clock stands at `clock()`. */
  async function runInReview(clock: { now: number }) {
    const store = new Store(freshStore(), () => clock.now);
    const run = await store.runs.create(newRun(1), step);
    if (!run) throw new Error("no run");
    await store.runs.transition(run.id, "claim");
    const pass = await store.passes.current(run.id);
    for (const event of ["start", "planned", "built", "gate_open"] as const) await store.passes.transition(pass?.id ?? 0, event);
    await store.runs.transition(run.id, "gate_open");
    return { store, runId: run.id };
  }

  it("lists a run at rest whose last state change is not published, and not once it is", async () => {
    const { store, runId } = await runInReview({ now: 1_000 });
    expect((await store.runs.behindOnGitHub()).map((r) => [r.id, r.state])).toEqual([[runId, "review"]]);
    await store.runs.markPublished(runId, await store.runs.lastTransition(runId));
    expect(await store.runs.behindOnGitHub()).toEqual([]);
  });

  it("lists it again after the next state change, even back into a state it was in (a second pass's review)", async () => {
    const { store, runId } = await runInReview({ now: 1_000 });
    await store.runs.markPublished(runId, await store.runs.lastTransition(runId));
    await store.runs.transition(runId, "next_pass");
    expect(await store.runs.behindOnGitHub()).toEqual([]);
    await store.runs.transition(runId, "claim");
    await store.runs.transition(runId, "gate_open");
    expect((await store.runs.behindOnGitHub()).map((r) => r.state)).toEqual(["review"]);
  });

  it("never moves the mark back: a slow publication of an older change does not hide a newer one", async () => {
    const { store, runId } = await runInReview({ now: 1_000 });
    const older = await store.runs.lastTransition(runId);
    await store.runs.accept(runId, { by: "bob", via: "approval" });
    await store.runs.markPublished(runId, await store.runs.lastTransition(runId));
    await store.runs.markPublished(runId, older);
    expect(await store.runs.behindOnGitHub()).toEqual([]);
    expect((await store.runs.get(runId))?.published_event).toBe(await store.runs.lastTransition(runId));
  });

  it("records an acceptance with its pass and decision in one step, or not at all", async () => {
    const { store, runId } = await runInReview({ now: 2_000 });
    expect((await store.runs.accept(runId, { by: "bob", via: "override" }))?.state).toBe("accepted");
    expect(await store.passes.current(runId)).toMatchObject({
      state: "accepted",
      decision: "accept",
      decided_by: "bob",
      decided_via: "/lisa accept",
      decided_at: 2_000,
    });
    expect((await store.events.of(runId)).at(-1)).toMatchObject({ kind: "accept", actor: "bob", detail: "/lisa accept" });
    // Accepted already: refused, and the pass keeps its decision.
    expect(await store.runs.accept(runId, { by: "carol", via: "approval" })).toBeUndefined();
    expect((await store.passes.current(runId))?.decided_by).toBe("bob");
  });
});

describe("store.passes.startNext", () => {
  it("supersedes the pass at the gate, starts pass 2 and queues the run", async () => {
    const store = ticking();
    const id = await runInReview(store);
    const pass = await store.passes.startNext(id, { trigger: "redirect", requestedBy: "bob", config: { v: 2 }, guidance: [] });
    expect(pass).toMatchObject({ number: 2, trigger: "redirect", requested_by: "bob", state: "queued", config: { v: 2 } });
    expect((await store.passes.of(id)).map((p) => [p.number, p.state])).toEqual([
      [1, "superseded"],
      [2, "queued"],
    ]);
    expect((await store.passes.get(id, 1))?.finished_at).toEqual(expect.any(Number));
    expect(await store.runs.get(id)).toMatchObject({ state: "queued", current_pass: 2 });
    expect((await store.events.of(id)).at(-1)).toMatchObject({
      kind: "next_pass",
      from_state: "review",
      to_state: "queued",
      actor: "bob",
    });
  });

  it("binds the guidance queued during the pass and the request's own to the new pass, in order", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    await store.runs.transition(id, "claim");
    await store.guidance.add(id, [guidance("d1", "use v2")], undefined);
    await store.guidance.add(id, [guidance("d2", "add a test")], undefined);
    expect((await store.guidance.queued(id)).map((g) => g.body)).toEqual(["use v2", "add a test"]);
    await store.runs.transition(id, "gate_open");
    const pass = await store.passes.startNext(id, {
      trigger: "review",
      requestedBy: "bob",
      config: {},
      guidance: [guidance("d3", "rename it", 77)],
    });
    expect((await store.guidance.forPass(pass?.id ?? 0)).map((g) => [g.body, g.github_id])).toEqual([
      ["use v2", null],
      ["add a test", null],
      ["rename it", 77],
    ]);
    expect(await store.guidance.queued(id)).toEqual([]);
  });

  it("binds guidance to the pass under way only while one of its build steps' agent sessions runs", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    await store.runs.transition(id, "claim");
    const pass = await store.passes.current(id);
    const [built] = await store.steps.of(id);
    const stepId = built?.id ?? 0;
    const current = { id: pass?.id ?? 0, number: pass?.number ?? 0 };
    await store.steps.enterPhase(stepId, "agent");
    expect(await store.guidance.steer(id, current, [guidance("d1", "before the session")])).toEqual([]);
    const session = await store.sessions.start({
      step_id: stepId,
      iteration: 1,
      purpose: "implement",
      provider: "claude",
      model: null,
    });
    // Said on another repository's PR, or the agent's own refinements: not for this session, so not steered.
    const elsewhere = { ...guidance("d5", "on the web PR"), repo: "web" };
    expect(await store.guidance.steer(id, current, [guidance("d6", "here"), elsewhere])).toEqual([]);
    expect(await store.guidance.steer(id, current, [{ ...guidance("d7", "a refinement"), source: "continue" }])).toEqual([]);
    expect(await store.guidance.steer(id, current, [guidance("d2", "while it runs")])).toEqual(["claude"]);
    await store.steps.enterPhase(stepId, "gates");
    expect(await store.guidance.steer(id, current, [guidance("d3", "while the gates run")])).toEqual([]);
    await store.steps.enterPhase(stepId, "agent");
    await store.sessions.finish(session, { state: "succeeded", cost_usd: 0, turns: 1, failure_kind: null, message: null });
    expect(await store.guidance.steer(id, current, [guidance("d4", "after it ended")])).toEqual([]);
    expect((await store.guidance.forPass(current.id)).map((g) => g.body)).toEqual(["while it runs"]);
    expect(await store.guidance.queued(id)).toEqual([]);
  });

  it("refuses to start a pass while one runs, and binds nothing", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    await store.runs.transition(id, "claim");
    await store.guidance.add(id, [guidance("d1", "use v2")], undefined);
    const next = await store.passes.startNext(id, {
      trigger: "redirect",
      requestedBy: "bob",
      config: {},
      guidance: [guidance("d2", "x")],
    });
    expect(next).toBeUndefined();
    expect((await store.passes.of(id)).map((p) => p.number)).toEqual([1]);
    expect(await store.runs.get(id)).toMatchObject({ state: "running", current_pass: 1 });
    expect((await store.guidance.queued(id)).map((g) => g.body)).toEqual(["use v2"]);
  });

  it("starts the queued pass as a running pass ends (queued_pass)", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    await store.runs.transition(id, "claim");
    await store.guidance.add(id, [guidance("d1", "use v2")], undefined);
    const pass = await store.passes.startNext(id, {
      trigger: "redirect",
      requestedBy: "bob",
      config: {},
      guidance: [],
      event: "queued_pass",
    });
    expect(pass?.number).toBe(2);
    expect((await store.runs.get(id))?.state).toBe("queued");
    expect((await store.guidance.forPass(pass?.id ?? 0)).map((g) => g.body)).toEqual(["use v2"]);
  });

  it("supersedes a blocked pass: its blocked steps become skipped", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    await store.runs.transition(id, "claim");
    const first = (await store.passes.current(id))?.id ?? 0;
    for (const event of ["start", "planned", "block"] as const) await store.passes.transition(first, event);
    const [blocked] = await store.steps.of(id);
    await store.steps.move(blocked?.id ?? 0, "start");
    await store.steps.move(blocked?.id ?? 0, "block");
    await store.runs.transition(id, "block");
    expect((await store.passes.startNext(id, { trigger: "review", requestedBy: "bob", config: {}, guidance: [] }))?.number).toBe(
      2,
    );
    expect((await store.passes.get(id, 1))?.state).toBe("superseded");
    expect((await store.steps.of(id)).map((s) => s.state)).toEqual(["skipped"]);
  });

  it("refuses a run that has ended", async () => {
    const store = ticking();
    const id = await runInReview(store);
    await store.runs.transition(id, "close");
    expect(
      await store.passes.startNext(id, { trigger: "redirect", requestedBy: "bob", config: {}, guidance: [] }),
    ).toBeUndefined();
  });
});

describe("store.guidance.add", () => {
  it("keeps one row per delivery and comment: a redelivered webhook adds nothing", async () => {
    const store = ticking();
    const id = await runInReview(store);
    await store.guidance.add(id, [guidance("d1", "use v2", 77), guidance("d1", "and v3", 78)], undefined);
    await store.guidance.add(id, [guidance("d1", "use v2", 77), guidance("d1", "and v3", 78)], undefined);
    expect((await store.guidance.queued(id)).map((g) => g.github_id)).toEqual([77, 78]);
  });

  it("keeps the same comment brought by another gesture", async () => {
    const store = ticking();
    const id = await runInReview(store);
    await store.guidance.add(id, [guidance("d1", "use v2", 77)], undefined);
    await store.guidance.add(id, [guidance("d2", "use v2", 77)], undefined);
    expect((await store.guidance.queued(id)).map((g) => g.delivery_id)).toEqual(["d1", "d2"]);
  });

  it("adds nothing when a command without a comment id is handled again after a crash", async () => {
    const store = ticking();
    const id = await runInReview(store);
    await store.guidance.add(id, [guidance("d1", "use the v2 endpoint")], undefined);
    await store.guidance.add(id, [guidance("d1", "use the v2 endpoint")], undefined);
    expect((await store.guidance.queued(id)).map((g) => g.body)).toEqual(["use the v2 endpoint"]);
  });

  it("keeps every item of one delivery that has no comment id, such as the refinements of a continue", async () => {
    const store = ticking();
    const id = await runInReview(store);
    await store.guidance.add(id, [guidance("d1", "add pagination"), guidance("d1", "document the endpoint")], undefined);
    expect((await store.guidance.queued(id)).map((g) => g.body)).toEqual(["add pagination", "document the endpoint"]);
  });

  it("adds to the pass it is given: guidance joins a pass whose plan is not fixed yet", async () => {
    const store = ticking();
    const id = (await store.runs.create(newRun(1), step))?.id ?? 0;
    const pass = (await store.passes.current(id))?.id ?? 0;
    await store.guidance.add(id, [guidance("d1", "use v2")], pass);
    expect((await store.guidance.forPass(pass)).map((g) => g.body)).toEqual(["use v2"]);
    expect(await store.guidance.queued(id)).toEqual([]);
  });
});

describe("store.passes.recordPlan", () => {
  const api = { position: 1, owner: "acme", repo: "api", branch: "lisa/1-title", baseBranch: "main", scope: "add the endpoint" };
  const web = { position: 2, owner: "acme", repo: "web", branch: "lisa/1-title", baseBranch: "main", scope: "call it" };
  const mobile = { position: 1, owner: "acme", repo: "mobile", branch: "lisa/1-title", baseBranch: "main", scope: "show it" };

  /** A two-repository run whose pass 1 delivered PRs api#5 and web#7, now waiting in pass 2. */
  const secondPass = async (store: Store) => {
    const planning = [{ position: 0, owner: "acme", repo: "api", branch: "", baseBranch: null, scope: null }];
    const id = (await store.runs.create(newRun(1), planning))?.id ?? 0;
    const [planner] = await store.steps.of(id);
    await store.steps.move(planner?.id ?? 0, "start");
    await store.steps.move(planner?.id ?? 0, "deliver", { phase: "done" });
    await store.passes.recordPlan(id, 1, { steps: ["api", "web"] }, [api, web]);
    for (const [s, pr] of (await store.steps.of(id)).filter((s) => s.position > 0).map((s, i) => [s, i === 0 ? 5 : 7] as const)) {
      await store.steps.move(s.id, "start");
      await buildThrough(store, s.id);
      await store.steps.move(s.id, "deliver", { phase: "done", pr_number: pr, pr_state: "open", start_sha: "aaa111" });
    }
    const [, apiStep] = await store.steps.of(id);
    const session = await store.sessions.start({
      step_id: apiStep?.id ?? 0,
      iteration: 3,
      purpose: "implement",
      provider: "claude",
      model: null,
    });
    await store.sessions.finish(session, { state: "succeeded", cost_usd: 1, turns: 2, failure_kind: null, message: null });
    await store.runs.transition(id, "claim");
    await store.runs.transition(id, "gate_open");
    await store.passes.startNext(id, { trigger: "redirect", requestedBy: "bob", config: {}, guidance: [] });
    return id;
  };

  it("creates the steps of pass 1 at the plan's positions, each recorded in the pass", async () => {
    const store = ticking();
    const id =
      (
        await store.runs.create(newRun(1), [
          { position: 0, owner: "acme", repo: "api", branch: "", baseBranch: null, scope: null },
        ])
      )?.id ?? 0;
    await store.passes.recordPlan(id, 1, { steps: ["api", "web"] }, [api, web]);
    expect((await store.steps.of(id)).map((s) => [s.position, s.repo, s.pass, s.state, s.scope])).toEqual([
      [0, "api", 1, "pending", null],
      [1, "api", 1, "pending", "add the endpoint"],
      [2, "web", 1, "pending", "call it"],
    ]);
    expect((await store.runs.get(id))?.plan).toBe('{"steps":["api","web"]}');
    expect((await store.steps.allInPass((await store.passes.current(id))?.id ?? 0)).map((r) => [r.state, r.scope])).toEqual([
      ["pending", "add the endpoint"],
      ["pending", "call it"],
    ]);
  });

  it("resets a step the new pass names, on the same branch and PR, with a fresh budget", async () => {
    const store = ticking();
    const id = await secondPass(store);
    await store.passes.recordPlan(id, 2, { steps: ["api"] }, [{ ...api, scope: "use v2" }]);
    const [, apiStep] = await store.steps.of(id);
    expect(apiStep).toMatchObject({
      pass: 2,
      state: "pending",
      phase: "workspace",
      scope: "use v2",
      start_sha: null,
      branch: "lisa/1-title",
      pr_number: 5,
      pr_state: "open",
      iteration_base: 3,
    });
    expect((await store.steps.history(apiStep?.id ?? 0)).map((r) => [r.number, r.state, r.scope])).toEqual([
      [1, "pending", "add the endpoint"],
      [2, "pending", "use v2"],
    ]);
  });

  it("leaves the steps the new pass does not name as they were", async () => {
    const store = ticking();
    const id = await secondPass(store);
    const before = (await store.steps.of(id))[2];
    await store.passes.recordPlan(id, 2, { steps: ["api"] }, [{ ...api, scope: "use v2" }]);
    expect((await store.steps.of(id))[2]).toEqual(before);
    expect((await store.steps.history(before?.id ?? 0)).map((r) => r.number)).toEqual([1]);
  });

  it("gives a repository new to the plan a new step at the next position", async () => {
    const store = ticking();
    const id = await secondPass(store);
    await store.passes.recordPlan(id, 2, { steps: ["mobile"] }, [mobile]);
    expect((await store.steps.of(id)).map((s) => [s.position, s.repo, s.pass, s.state])).toEqual([
      [0, "api", 1, "delivered"],
      [1, "api", 1, "delivered"],
      [2, "web", 1, "delivered"],
      [3, "mobile", 2, "pending"],
    ]);
    expect((await store.steps.allInPass((await store.passes.current(id))?.id ?? 0)).map((r) => r.scope)).toEqual(["show it"]);
  });

  it("opens a follow-up step for a repository whose PR was merged", async () => {
    const store = ticking();
    const id = await secondPass(store);
    const [, apiStep] = await store.steps.of(id);
    await store.steps.record(apiStep?.id ?? 0, { pr_state: "merged" });
    await store.passes.recordPlan(id, 2, { steps: ["api"] }, [{ ...api, branch: "lisa/1-title-p2" }]);
    expect((await store.steps.of(id)).map((s) => [s.position, s.repo, s.branch, s.pass])).toEqual([
      [0, "api", "", 1],
      [1, "api", "lisa/1-title", 1],
      [2, "web", "lisa/1-title", 1],
      [3, "api", "lisa/1-title-p2", 2],
    ]);
  });

  it("keeps pass 1's plan on the run and records each later plan on its pass", async () => {
    const store = ticking();
    const id = await secondPass(store);
    await store.passes.recordPlan(id, 2, { steps: ["web"] }, [web]);
    expect((await store.runs.get(id))?.plan).toBe('{"steps":["api","web"]}');
    expect((await store.passes.get(id, 2))?.plan).toBe('{"steps":["web"]}');
  });

  it("records the same plan twice (a restart) without new steps", async () => {
    const store = ticking();
    const id = await secondPass(store);
    await store.passes.recordPlan(id, 2, { steps: ["api", "mobile"] }, [api, mobile]);
    const once = {
      steps: await store.steps.of(id),
      records: await store.steps.allInPass((await store.passes.current(id))?.id ?? 0),
    };
    await store.passes.recordPlan(id, 2, { steps: ["api", "mobile"] }, [api, mobile]);
    expect({
      steps: await store.steps.of(id),
      records: await store.steps.allInPass((await store.passes.current(id))?.id ?? 0),
    }).toEqual(once);
  });

  it("refuses a pass that does not exist", async () => {
    const store = ticking();
    const id = await secondPass(store);
    await expect(store.passes.recordPlan(id, 3, {}, [])).rejects.toThrow("run 1 has no pass 3");
  });
});

describe("Store config files", () => {
  it("keeps the last read of each file, one row per installation, repository (in any case) and path", async () => {
    const store = new Store(freshStore());
    const file = { installation_id: 2, owner: "Acme", repo: "API", path: ".github/lisa.yml" };
    await store.configFiles.save({ ...file, etag: 'W/"1"', content: "label: bot\n", label: "bot", validated_at: 1_000 });
    await store.configFiles.save({ ...file, etag: 'W/"2"', content: "label: ai\n", label: "ai", validated_at: 2_000 });
    await store.configFiles.save({ ...file, installation_id: 3, etag: null, content: null, label: null, validated_at: 3_000 });

    expect(await store.configFiles.get(2, "acme", "api", ".github/lisa.yml")).toMatchObject({
      owner: "acme",
      repo: "api",
      etag: 'W/"2"',
      content: "label: ai\n",
      label: "ai",
      validated_at: 2_000,
    });
    expect(await store.configFiles.get(3, "ACME", "Api", ".github/lisa.yml")).toMatchObject({
      etag: null,
      content: null,
      label: null,
    });
    expect(await store.configFiles.get(2, "acme", "api", ".github/other.yml")).toBeUndefined();
  });
});
