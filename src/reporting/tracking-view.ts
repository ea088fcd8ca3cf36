import type { JudgeView, PrGate } from "./views.ts";

export type TrackingSession = {
  iteration: number;
  provider: string;
  model?: string;
  purpose: string;
  state: "running" | "succeeded" | "failed" | "interrupted" | "stopped";
  durationMs?: number;
  costUsd: number;
  turns?: number;
  failureKind?: string;
  /** Who stopped a `stopped` session, and how, in Lisa's words (e.g. `` `/lisa abort` ``). */
  stoppedBy?: { actor: string; how: string };
};

export type TrackingStep = {
  position: number;
  repo: string;
  branch: string;
  /** The step's state in the current pass (`running`, `delivered`, `blocked`, …). */
  state: string;
  /** While running: `workspace`, `agent`, `gates`, … */
  phase?: string;
  prUrl?: string;
  scope?: string;
  gate?: PrGate;
  sessions: TrackingSession[];
  blockReason?: string;
  /** A blocked step's attempt, pushed to Lisa's WIP branch: its name, and where GitHub shows it when known. */
  wip?: { ref: string; url?: string };
  lastGateFailure?: { command: string; output: string; judge?: JudgeView };
  /** The agent's reflections on this pass's gate failures. */
  reflections?: { iteration: number; gate: string; whatFailed: string; cause: string; change: string }[];
};

/** The run as the tracking comment shows it (docs/live-progress.md). */
export interface TrackingView {
  runId: number;
  state: "queued" | "running" | "plan_review" | "blocked" | "review" | "accepted" | "stopped" | "failed" | "merged" | "closed";
  pass: number;
  maxPasses: number;
  requestedBy: string;
  elapsedMs: number;
  costUsd: number;
  /** What judge sessions cost of `costUsd`, shown apart when not 0. */
  judgeUsd?: number;
  limitUsd: number;
  plan?: { summary?: string; state: "pending" | "running" | "delivered" | "failed" };
  steps: TrackingStep[];
  /** Guidance that will start the next pass when the current one ends. */
  queuedGuidance: { author: string; source: string; excerpt: string }[];
  history: { pass: number; trigger: string; by: string; outcome: string; costUsd: number }[];
  /** The current pass proposed refinements, so `/lisa continue` has something to do. */
  canContinue: boolean;
  error?: string;
  /** Overrides the "Waiting for" line derived from the state. */
  waitingFor?: string;
  /** What happened to the run that its steps do not show, e.g. a worker lost and its work redone. */
  notices?: string[];
  /** The run was accepted, and that no longer stands (docs/operations.md): who did what. */
  withdrawn?: { actor?: string; what?: string };
  /** Pushes people made to the run's PRs since its pass ended (docs/operations.md); the next pass builds on them. */
  humanPushes?: { actor: string; pr: string; range: string }[];
  secrets: readonly string[];
}
