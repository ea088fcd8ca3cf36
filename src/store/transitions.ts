/**
 * The run, pass and step state machines, and a step's phases, as data. Every state change goes
 * through `nextRunState` / `nextPassState` / `nextStepState` (a phase through `phaseMoveAllowed`),
 * and the store writes it as a compare-and-set on the state it was computed from,
 * so a command that arrives while a worker executes the run can never overwrite a newer state.
 */

/** Open states can still change; `merged` is the end, and so is `closed` unless one of its PRs is reopened. */
export const RUN_STATES = [
  "queued",
  "running",
  "plan_review",
  "blocked",
  "review",
  "accepted",
  "stopped",
  "failed",
  "merged",
  "closed",
] as const;
export type RunState = (typeof RUN_STATES)[number];

/** Finished runs: `finished_at` is set and the issue may get a new run; only `reopen` brings a closed one back. */
export const TERMINAL_RUN_STATES: ReadonlySet<RunState> = new Set(["merged", "closed"]);

export type RunEvent =
  /** A worker takes the queued run. */
  | "claim"
  /** With `review.plan`, the plan is fixed and waits for `/lisa proceed` or a redirect. */
  | "plan_ready"
  /** `/lisa proceed`: build the plan that waited for review. */
  | "proceed"
  /** A redirect on a plan that waits for review: the same pass plans again with it. */
  | "replan"
  /** The pass's build and ascend are done and every step delivered or was left unchanged: the gate opens. */
  | "gate_open"
  /** The build is done but a step is blocked. */
  | "block"
  /** An infrastructure error (git, API, every provider down). */
  | "fail"
  /** Lisa stopped mid-run; the run resumes where it stood. */
  | "interrupt"
  /** A writer's redirect, continue or changes-requested review: pass N+1. */
  | "next_pass"
  /** Guidance queued during the pass starts pass N+1 as soon as the pass ends. */
  | "queued_pass"
  /** `/lisa fix`: the blocked steps again, same pass. */
  | "fix"
  /** `/lisa skip`: the blocked steps are skipped; the pass ascends to the gate. */
  | "skip"
  /** `/lisa retry` after an infrastructure failure. */
  | "retry"
  | "abort"
  /** Every open PR approved at its head, or a writer's `/lisa accept`. */
  | "accept"
  /** An approval dismissed, a human push or a change request after accept. */
  | "withdraw"
  /** Every PR of the run closed without merging. */
  | "close"
  /** A PR of a closed run reopened, its pass at the gate: the run waits for review again. */
  | "reopen"
  /** The same, but the pass had not reached the gate when the run closed: it stands stopped. */
  | "reopen_stopped"
  /** Every PR merged (or merged and the rest dropped). */
  | "merge";

type Table<S extends string, E extends string> = Record<S, Partial<Record<E, S>>>;

/** Allowed run transitions: state → event → next state. Anything missing is refused. */
export const RUN_TRANSITIONS = {
  queued: { claim: "running", abort: "stopped", next_pass: "queued", close: "closed", merge: "merged" },
  running: {
    plan_ready: "plan_review",
    gate_open: "review",
    block: "blocked",
    fail: "failed",
    interrupt: "queued",
    queued_pass: "queued",
    abort: "stopped",
    close: "closed",
    merge: "merged",
  },
  // A redirect on a plan waiting for review re-plans the same pass.
  plan_review: { proceed: "queued", replan: "queued", abort: "stopped", close: "closed", merge: "merged" },
  blocked: { fix: "queued", skip: "queued", next_pass: "queued", abort: "stopped", close: "closed", merge: "merged" },
  review: { next_pass: "queued", accept: "accepted", close: "closed", merge: "merged" },
  accepted: { next_pass: "queued", withdraw: "review", close: "closed", merge: "merged" },
  stopped: { next_pass: "queued", accept: "accepted", close: "closed", merge: "merged" },
  failed: { retry: "queued", next_pass: "queued", close: "closed", merge: "merged" },
  merged: {},
  // A reopened PR is back in the gate; what its pass left unfinished stays stopped.
  closed: { reopen: "review", reopen_stopped: "stopped" },
} as const satisfies Table<RunState, RunEvent>;

/** The state `event` leads to from `from`, or undefined when the table does not allow it. */
export function nextRunState(from: RunState, event: RunEvent): RunState | undefined {
  return (RUN_TRANSITIONS[from] as Partial<Record<RunEvent, RunState>>)[event];
}

export const PASS_STATES = [
  "queued",
  "planning",
  "plan_review",
  "building",
  "blocked",
  "ascending",
  "at_gate",
  "accepted",
  "superseded",
  "aborted",
] as const;
export type PassState = (typeof PASS_STATES)[number];

export type PassEvent =
  | "start"
  | "planned"
  | "plan_ready"
  | "replan"
  | "block"
  | "built"
  | "gate_open"
  | "fix"
  | "skip"
  | "accept"
  | "withdraw"
  | "supersede"
  | "abort";

/**
 * Allowed pass transitions. A run-level failure leaves the pass
 * where it stood, so `/lisa retry` resumes it.
 */
export const PASS_TRANSITIONS = {
  queued: { start: "planning", supersede: "superseded", abort: "aborted" },
  planning: { planned: "building", plan_ready: "plan_review", abort: "aborted", supersede: "superseded" },
  plan_review: { planned: "building", replan: "planning", abort: "aborted", supersede: "superseded" },
  // A run that failed mid-build may be redirected instead of retried: its pass is superseded.
  building: { block: "blocked", built: "ascending", abort: "aborted", supersede: "superseded" },
  blocked: { fix: "building", skip: "ascending", supersede: "superseded", abort: "aborted" },
  ascending: { gate_open: "at_gate", abort: "aborted", supersede: "superseded" },
  at_gate: { accept: "accepted", supersede: "superseded" },
  accepted: { withdraw: "at_gate", supersede: "superseded" },
  superseded: {},
  aborted: {},
} as const satisfies Table<PassState, PassEvent>;

export function nextPassState(from: PassState, event: PassEvent): PassState | undefined {
  return (PASS_TRANSITIONS[from] as Partial<Record<PassEvent, PassState>>)[event];
}

export const STEP_STATES = ["pending", "running", "delivered", "unchanged", "blocked", "skipped", "dropped", "failed"] as const;
export type StepState = (typeof STEP_STATES)[number];

export type StepEvent =
  /** The workflow takes the step up, or resumes it after a restart. */
  | "start"
  /** Pushed and its pull request open (or the plan of the planning step recorded). */
  | "deliver"
  /** The pass left its repository as it was. */
  | "leave_unchanged"
  /** Its gates or the agent need a human (`/lisa fix` or `/lisa skip`). */
  | "block"
  /** Its pull request was closed unmerged, by a human or before Lisa got to it. */
  | "drop"
  /** Its pull request was reopened. */
  | "reopen"
  /** Left out: `/lisa skip`, an abort, a pass superseded before it finished, a requester who cannot write there. */
  | "skip"
  /** A later plan of the same pass did not name it. */
  | "set_aside"
  | "fail"
  /** `/lisa fix` or `/lisa retry`: the same pass tries it again. */
  | "again"
  /** A later pass works on it (its plan names it again, or the planning step plans again). */
  | "replan";

/**
 * Allowed step transitions. Work that ends (deliver, leave, block, fail) starts from running; a
 * step whose pull request is closed is dropped whatever it stood at.
 */
export const STEP_TRANSITIONS = {
  pending: { start: "running", skip: "skipped", set_aside: "unchanged", drop: "dropped", fail: "failed", replan: "pending" },
  running: {
    start: "running",
    deliver: "delivered",
    leave_unchanged: "unchanged",
    block: "blocked",
    drop: "dropped",
    skip: "skipped",
    fail: "failed",
  },
  delivered: { replan: "pending", drop: "dropped" },
  unchanged: { replan: "pending", drop: "dropped" },
  blocked: { again: "pending", skip: "skipped", drop: "dropped", fail: "failed" },
  skipped: { replan: "pending", drop: "dropped" },
  dropped: { reopen: "delivered" },
  failed: { again: "pending", replan: "pending", drop: "dropped" },
} as const satisfies Table<StepState, StepEvent>;

export function nextStepState(from: StepState, event: StepEvent): StepState | undefined {
  return (STEP_TRANSITIONS[from] as Partial<Record<StepEvent, StepState>>)[event];
}

/** Where a running step is in its delivery; recorded before the side effect it names. */
export const STEP_PHASES = ["planning", "workspace", "agent", "gates", "commit", "push", "pull_request", "ci", "done"] as const;
export type StepPhase = (typeof STEP_PHASES)[number];

/**
 * The phases the workflow may move a step on to; staying in a phase (a resumed step) is always
 * allowed. Going back to `workspace` or `planning` is a fresh start, which only the store's own
 * operations (replan, redo, a fresh budget) do.
 */
export const PHASE_MOVES = {
  planning: ["done"],
  workspace: ["agent"],
  agent: ["gates"],
  // A failed gate goes back to the agent.
  gates: ["agent", "commit"],
  // The pass may leave the repository unchanged.
  commit: ["push", "done"],
  // A secret found in the push discards the work, back to the agent.
  push: ["pull_request", "agent"],
  pull_request: ["ci", "done"],
  // A failing check of the pull request's CI goes back to the agent.
  ci: ["done", "agent"],
  done: [],
} as const satisfies Record<StepPhase, readonly StepPhase[]>;

export const phaseMoveAllowed = (from: StepPhase, to: StepPhase): boolean =>
  from === to || (PHASE_MOVES[from] as readonly StepPhase[]).includes(to);

/** A pass's state in words, for the history people read. */
export const PASS_OUTCOME: Record<PassState, string> = {
  queued: "queued",
  planning: "planning",
  plan_review: "plan waiting for review",
  building: "building",
  blocked: "blocked",
  ascending: "finishing",
  at_gate: "ready for review",
  accepted: "accepted",
  superseded: "followed by the next pass",
  aborted: "stopped",
};
