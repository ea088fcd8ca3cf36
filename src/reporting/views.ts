/**
 * Plain view objects the reporting renderers take. The pass engine builds them from the store, so
 * reporting never reads the store itself. Every string in them may come from a human or an agent
 * unless its comment says otherwise; the renderers treat it as untrusted.
 */

/** The review gate of one pull request of the run, as the gate evaluation (evaluate-gate.ts) found it. */
export type PrGate = {
  /** `owner/name`. */
  repo: string;
  number: number;
  url: string;
  status: "approved" | "pending" | "changes_requested" | "merged" | "dropped";
  /** Writers whose latest review approves the current head. */
  approvers: string[];
  /** Writers whose latest review requests changes. */
  blockers: string[];
  headSha: string | null;
  /** Writers whose latest review approves an older head: they must approve again. */
  stale?: string[];
  /** With `review.accept: github`: GitHub's own `reviewDecision` (null when the base has no review rule). */
  githubDecision?: string | null;
  /** Approvals the base branch's rules ask for, when GitHub still wants more and said how many. */
  requiredApprovals?: number;
};

/** One item of human (or agent-proposed) guidance bound to a pass. */
export type GuidanceView = {
  /** Its number in the pass, as the prompt names it (g1 … gk). */
  n: number;
  author: string;
  source: "command" | "review" | "inline" | "continue" | "fix";
  /** `path:line` of an inline comment, e.g. `src/a.ts:42`. */
  where?: string;
  url?: string;
  body: string;
  /** The inline comment was made on an earlier commit. */
  outdated: boolean;
  /** The agent's own verdict, from its manifest. */
  status?: "addressed" | "partly" | "not_addressed" | "not_applicable";
  note?: string;
  /** Lisa answered in the comment's thread. */
  replied?: boolean;
};

/** One gate command as Lisa ran it. */
export type GateLine = {
  command: string;
  passed: boolean;
  /** Green in the previous pass, red now. */
  regressed?: boolean;
  /** The repository it ran in, named where gates of several repositories are listed together. */
  repo?: string;
  /** A check of the pull request's own CI, not a command Lisa ran; `pending` when it was still running, `fixed` when a fix of this pass made it green. */
  ci?: boolean;
  pending?: boolean;
  fixed?: boolean;
};

export type CommitView = {
  sha: string;
  subject: string;
  author: string;
  /** Pushed by a person, not by Lisa. */
  human: boolean;
};

export type FileChange = { path: string; added: number; deleted: number };
