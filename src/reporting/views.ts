/**
 * Plain view objects the reporting renderers take. The pass engine builds them from the store, so
 * reporting never reads the store itself. Every string in them may come from a human or an agent
 * unless its comment says otherwise; the renderers treat it as untrusted.
 */

export type { FileChange, GateLine, JudgeView, PrGate } from "../records/columns.ts";

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

export type CommitView = {
  sha: string;
  subject: string;
  author: string;
  /** Pushed by a person, not by Lisa. */
  human: boolean;
};
