import { describe, expect, it } from "vitest";
import {
  nextPassState,
  nextRunState,
  nextStepState,
  PASS_STATES,
  PASS_TRANSITIONS,
  type PassEvent,
  type PassState,
  RUN_STATES,
  RUN_TRANSITIONS,
  type RunEvent,
  type RunState,
  STEP_STATES,
  STEP_TRANSITIONS,
  type StepEvent,
  type StepState,
  TERMINAL_RUN_STATES,
} from "../../src/store/transitions.ts";

// Written out as records so that adding an event to the union without a decision here fails the typecheck.
const RUN_EVENT_SET: Record<RunEvent, true> = {
  claim: true,
  gate_open: true,
  block: true,
  fail: true,
  interrupt: true,
  next_pass: true,
  queued_pass: true,
  plan_ready: true,
  proceed: true,
  replan: true,
  fix: true,
  skip: true,
  retry: true,
  abort: true,
  accept: true,
  withdraw: true,
  close: true,
  reopen: true,
  reopen_stopped: true,
  merge: true,
};
const RUN_EVENTS = Object.keys(RUN_EVENT_SET) as RunEvent[];

const PASS_EVENT_SET: Record<PassEvent, true> = {
  start: true,
  planned: true,
  plan_ready: true,
  replan: true,
  block: true,
  built: true,
  gate_open: true,
  fix: true,
  skip: true,
  accept: true,
  withdraw: true,
  supersede: true,
  abort: true,
};
const PASS_EVENTS = Object.keys(PASS_EVENT_SET) as PassEvent[];

/** Every PR of the run closed unmerged, or all merged: from any open state (§4.1, rules 21 and 23). */
const ENDINGS = { close: "closed", merge: "merged" } as const;

/**
 * The run machine as §3 and §4.1 of the review-gates design describe it; every pair not listed is
 * refused. Each entry names the rule of §3 it comes from.
 */
const EXPECTED_RUN: Record<RunState, Partial<Record<RunEvent, RunState>>> = {
  queued: {
    claim: "running", // a worker takes it (§4.1)
    abort: "stopped", // rule 15, for a pass queued but not started yet
    next_pass: "queued", // rule 5 (not in §3 for queued: guidance joins the queued pass instead)
    ...ENDINGS,
  },
  running: {
    gate_open: "review", // build and ascend done (§4.1)
    block: "blocked", // some step blocked (§4.1)
    fail: "failed", // infrastructure error (§4.1)
    interrupt: "queued", // Lisa stopped mid-run: resume where it stood
    queued_pass: "queued", // guidance queued during the pass starts pass N+1 at once (§4.1, decision 2)
    plan_ready: "plan_review", // review.plan: the plan waits for `/lisa proceed` (§4.1, rule 17)
    abort: "stopped", // rule 15
    ...ENDINGS,
  },
  plan_review: {
    proceed: "queued", // rule 17: `/lisa proceed` builds the plan
    replan: "queued", // E6: a redirect plans the same pass again
    abort: "stopped", // rule 15
    ...ENDINGS,
  },
  blocked: {
    fix: "queued", // rule 13
    skip: "queued", // rule 14: §3 says "→ ascend → review"; the worker ascends after claiming it again
    next_pass: "queued", // rule 5: pass N is superseded
    abort: "stopped", // rule 15
    ...ENDINGS,
  },
  review: {
    next_pass: "queued", // rules 5, 9, 11
    accept: "accepted", // rules 2 and 12
    ...ENDINGS,
  },
  accepted: {
    next_pass: "queued", // rules 5 (E15), 9, 11
    withdraw: "review", // rules 18 and 19
    ...ENDINGS,
  },
  stopped: {
    next_pass: "queued", // rules 5 and 11
    accept: "accepted", // rule 2: what is on the PRs was verified
    ...ENDINGS,
  },
  failed: {
    retry: "queued", // rule 16
    next_pass: "queued", // not in §3, which starts passes from review, accepted, blocked and stopped only
    ...ENDINGS,
  },
  merged: {},
  closed: {
    reopen: "review", // rule 22: a reopened PR is back in the gate
    reopen_stopped: "stopped", // rule 22, for a run closed before its pass reached the gate
  },
};

/** The pass machine of §4.2: queued → planning → building → [blocked] → ascending → at_gate → accepted | superseded | aborted. */
const EXPECTED_PASS: Record<PassState, Partial<Record<PassEvent, PassState>>> = {
  queued: { start: "planning", supersede: "superseded", abort: "aborted" },
  planning: { planned: "building", plan_ready: "plan_review", supersede: "superseded", abort: "aborted" },
  plan_review: { planned: "building", replan: "planning", supersede: "superseded", abort: "aborted" },
  building: { block: "blocked", built: "ascending", abort: "aborted", supersede: "superseded" },
  blocked: { fix: "building", skip: "ascending", supersede: "superseded", abort: "aborted" },
  ascending: { gate_open: "at_gate", abort: "aborted", supersede: "superseded" },
  at_gate: { accept: "accepted", supersede: "superseded" },
  accepted: { withdraw: "at_gate", supersede: "superseded" },
  superseded: {},
  aborted: {},
};

const cross = <S extends string, E extends string>(states: readonly S[], events: readonly E[]) =>
  states.flatMap((state) => events.map((event) => [state, event] as const));

describe("nextRunState", () => {
  const pairs = cross(RUN_STATES, RUN_EVENTS);

  it("covers every run state and event (10 × 20 pairs)", () => {
    expect(pairs).toHaveLength(200);
    expect(Object.keys(EXPECTED_RUN).sort()).toEqual([...RUN_STATES].sort());
  });

  it.each(pairs.filter(([state, event]) => EXPECTED_RUN[state][event]))(
    "moves a %s run on %s as the design says",
    (state, event) => {
      expect(nextRunState(state, event)).toBe(EXPECTED_RUN[state][event]);
    },
  );

  it.each(pairs.filter(([state, event]) => !EXPECTED_RUN[state][event]).map(([state, event]) => [event, state] as const))(
    "refuses %s on a %s run",
    (event, state) => {
      expect(nextRunState(state, event)).toBeUndefined();
    },
  );

  it("allows exactly the transitions of the expected table, no more", () => {
    expect(RUN_TRANSITIONS).toEqual(EXPECTED_RUN);
  });

  it("accepts nothing once a run is merged", () => {
    expect(RUN_EVENTS.map((event) => nextRunState("merged", event)).filter(Boolean)).toEqual([]);
  });

  it("takes a closed run back only when one of its PRs is reopened (rule 22)", () => {
    const moves = RUN_EVENTS.flatMap((event) => {
      const to = nextRunState("closed", event);
      return to ? [[event, to]] : [];
    });
    expect(moves).toEqual([
      ["reopen", "review"],
      ["reopen_stopped", "stopped"],
    ]);
  });

  it("ends only in merged and closed", () => {
    expect([...TERMINAL_RUN_STATES].sort()).toEqual(["closed", "merged"]);
  });

  it.each(RUN_STATES.filter((s) => !TERMINAL_RUN_STATES.has(s)))(
    "lets a %s run end when its PRs are all closed or all merged",
    (state) => {
      expect([nextRunState(state, "close"), nextRunState(state, "merge")]).toEqual(["closed", "merged"]);
    },
  );

  it.each(RUN_STATES.filter((s) => !TERMINAL_RUN_STATES.has(s)))("keeps every open %s run reachable from the label", (target) => {
    const reached = new Set<RunState>(["queued"]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [state, event] of cross([...reached], RUN_EVENTS)) {
        const to = nextRunState(state, event);
        if (to && !reached.has(to)) {
          reached.add(to);
          grew = true;
        }
      }
    }
    expect(reached.has(target)).toBe(true);
  });

  // The gestures of §3 that move the run, as the worker maps them onto events.
  it.each<[string, RunState, RunEvent, RunState | undefined]>([
    ["2: an approval at the head of every open PR accepts a run in review", "review", "accept", "accepted"],
    ["2: … and a stopped run, whose PRs were verified", "stopped", "accept", "accepted"],
    ["2: … but only records it while the pass runs", "running", "accept", undefined],
    ["2: … or while it is blocked", "blocked", "accept", undefined],
    ["5: a change request on a run in review starts pass N+1", "review", "next_pass", "queued"],
    ["5: … and on an accepted run (E15)", "accepted", "next_pass", "queued"],
    ["5: … and on a blocked run, superseding pass N", "blocked", "next_pass", "queued"],
    ["5: … and on a stopped run", "stopped", "next_pass", "queued"],
    ["5: … but only queues its guidance while the pass runs", "running", "next_pass", undefined],
    ["5: queued guidance starts pass N+1 as the running pass ends", "running", "queued_pass", "queued"],
    ["5: … never outside a running pass", "review", "queued_pass", undefined],
    ["12: /lisa accept on a run in review", "review", "accept", "accepted"],
    ["12: … not while the pass runs", "running", "accept", undefined],
    ["13: /lisa fix queues a blocked run again", "blocked", "fix", "queued"],
    ["13: … and nothing else", "review", "fix", undefined],
    ["14: /lisa skip moves a blocked run on", "blocked", "skip", "queued"],
    ["14: … and nothing else", "failed", "skip", undefined],
    ["15: /lisa abort stops a running pass", "running", "abort", "stopped"],
    ["15: … and a blocked one", "blocked", "abort", "stopped"],
    ["15: … but not a run waiting for review", "review", "abort", undefined],
    ["15: … nor an accepted one", "accepted", "abort", undefined],
    ["15: … nor a stopped one", "stopped", "abort", undefined],
    ["16: /lisa retry queues a failed run", "failed", "retry", "queued"],
    ["16: … and nothing else", "blocked", "retry", undefined],
    ["18/19: a dismissed approval or a human push withdraws an acceptance", "accepted", "withdraw", "review"],
    ["18/19: … and changes nothing in review", "review", "withdraw", undefined],
    ["21: every PR closed unmerged closes a run in review", "review", "close", "closed"],
    ["22: a PR of a closed run reopened brings it back to review", "closed", "reopen", "review"],
    ["22: … or to stopped when its pass had not reached the gate", "closed", "reopen_stopped", "stopped"],
    ["22: … and means nothing to an open run", "review", "reopen", undefined],
    ["23: every PR merged ends an accepted run", "accepted", "merge", "merged"],
    ["23: … and a running one", "running", "merge", "merged"],
  ])("rule %s", (_rule, from, event, to) => {
    expect(nextRunState(from, event)).toBe(to);
  });
});

describe("nextPassState", () => {
  const pairs = cross(PASS_STATES, PASS_EVENTS);

  it("covers every pass state and event (10 × 13 pairs)", () => {
    expect(pairs).toHaveLength(130);
    expect(Object.keys(EXPECTED_PASS).sort()).toEqual([...PASS_STATES].sort());
  });

  it.each(pairs.filter(([state, event]) => EXPECTED_PASS[state][event]))("moves a %s pass on %s as §4.2 says", (state, event) => {
    expect(nextPassState(state, event)).toBe(EXPECTED_PASS[state][event]);
  });

  it.each(pairs.filter(([state, event]) => !EXPECTED_PASS[state][event]).map(([state, event]) => [event, state] as const))(
    "refuses %s on a %s pass",
    (event, state) => {
      expect(nextPassState(state, event)).toBeUndefined();
    },
  );

  it("allows exactly the transitions of the expected table, no more", () => {
    expect(PASS_TRANSITIONS).toEqual(EXPECTED_PASS);
  });

  it.each(["superseded", "aborted"] as const)("accepts nothing once a pass is %s", (state) => {
    expect(PASS_EVENTS.map((event) => nextPassState(state, event)).filter(Boolean)).toEqual([]);
  });

  it("walks the spiral: queued, planning, building, blocked, ascending, at the gate, accepted", () => {
    const path: PassEvent[] = ["start", "planned", "block", "skip", "gate_open", "accept"];
    const states: (PassState | undefined)[] = [];
    let state: PassState | undefined = "queued";
    for (const event of path) {
      state = state && nextPassState(state, event);
      states.push(state);
    }
    expect(states).toEqual(["planning", "building", "blocked", "ascending", "at_gate", "accepted"]);
  });
});

const STEP_EVENT_SET: Record<StepEvent, true> = {
  start: true,
  deliver: true,
  leave_unchanged: true,
  block: true,
  drop: true,
  reopen: true,
  skip: true,
  set_aside: true,
  fail: true,
  again: true,
  replan: true,
};
const STEP_EVENTS = Object.keys(STEP_EVENT_SET) as StepEvent[];

/** A step's life within its run: each entry says who moves it that way. */
const EXPECTED_STEP: Record<StepState, Partial<Record<StepEvent, StepState>>> = {
  pending: {
    start: "running", // deliverStep, or the planning session
    skip: "skipped", // abort, a superseded pass, a requester without write access
    set_aside: "unchanged", // a later plan of the same pass left it out
    drop: "dropped", // its PR was closed before this pass got to it
    fail: "failed", // the run failed before it started
    replan: "pending", // the planning step plans again
  },
  running: {
    start: "running", // resumed after Lisa stopped mid-step
    deliver: "delivered",
    leave_unchanged: "unchanged",
    block: "blocked",
    drop: "dropped", // a PR found closed as it was about to be opened
    skip: "skipped", // abort mid-step, or a requester without write access on resume
    fail: "failed",
  },
  delivered: { replan: "pending", drop: "dropped" }, // a later pass's plan names it; its PR closed
  unchanged: { replan: "pending", drop: "dropped" },
  blocked: { again: "pending", skip: "skipped", drop: "dropped", fail: "failed" }, // `/lisa fix`, `/lisa skip`
  skipped: { replan: "pending", drop: "dropped" },
  dropped: { reopen: "delivered" }, // its PR reopened
  failed: { again: "pending", replan: "pending", drop: "dropped" }, // `/lisa retry`, a new pass
};

describe("nextStepState", () => {
  const pairs = cross(STEP_STATES, STEP_EVENTS);

  it("covers every step state and event (8 × 11 pairs)", () => {
    expect(pairs).toHaveLength(88);
    expect(Object.keys(EXPECTED_STEP).sort()).toEqual([...STEP_STATES].sort());
  });

  it.each(pairs.filter(([state, event]) => !EXPECTED_STEP[state][event]).map(([state, event]) => [event, state] as const))(
    "refuses %s on a %s step",
    (event, state) => {
      expect(nextStepState(state, event)).toBeUndefined();
    },
  );

  it("allows exactly the transitions of the expected table, no more", () => {
    expect(STEP_TRANSITIONS).toEqual(EXPECTED_STEP);
  });

  it("never takes delivered work back to running, nor ends work that never started", () => {
    expect(nextStepState("delivered", "start")).toBeUndefined();
    expect(nextStepState("pending", "deliver")).toBeUndefined();
    expect(nextStepState("pending", "block")).toBeUndefined();
  });
});
