import type { CommitView, FileChange, GateLine, GuidanceView, PrGate } from "./views.ts";

/** What a pass did to one pull request, for its review package. */
export interface PackageView {
  runId: number;
  pass: number;
  maxPasses: number;
  stepId: number;
  /** `owner/name` of this pull request's repository. */
  repo: string;
  /** `working` while the pass runs; the others once it ended on this pull request. */
  phase: "working" | "ready" | "blocked" | "skipped" | "aborted";
  /** The gesture that started the pass; `excerpt` is the human's text. */
  trigger: {
    kind: "initial" | "redirect" | "review" | "continue";
    by: string;
    url?: string;
    inlineCount?: number;
    excerpt?: string;
  };
  /** The pass's commits on the branch: `from` is the head before the pass, `to` the head after. */
  range?: { from: string; to: string; compareUrl?: string };
  commits: CommitView[];
  files: FileChange[];
  gates: GateLine[];
  /** The head the gates ran at. */
  headSha?: string;
  /** Anchor tests Lisa delivered in an earlier pass that this pass edited, with the reason the agent gave. */
  anchorEdits?: { path: string; reason?: string }[];
  /** The memory file, when the agent edited it in this pass (never Lisa's own memory commit). */
  memoryEdit?: string;
  /** The agent's reflections on the gate failures it was sent back for in this pass. */
  reflections?: { iteration: number; gate: string; whatFailed: string; cause: string; change: string }[];
  guidance: GuidanceView[];
  openQuestions: string[];
  recommendation?: { kind: "accept" | "continue" | "blocked"; text?: string };
  refinements: string[];
  block?: { reason: string; tried?: string; needed?: string; wipRef?: string; wipUrl?: string };
  cost: {
    sessions: number;
    providers: string[];
    durationMs: number;
    passUsd: number;
    /** What judge sessions cost of `passUsd`, shown apart when any ran. */
    judgeUsd?: number;
    judged?: boolean;
    runUsd: number;
    limitUsd: number;
  };
  /** Connections Lisa's egress proxy refused to this pass's agent sessions and gates on this pull request. */
  network?: { refused: number; hosts: string[] };
  /** Every pull request of the run, this one included. */
  siblings: PrGate[];
  /** Exact secret values to redact. */
  secrets: readonly string[];
}
