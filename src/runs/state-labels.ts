import type { GitHubPort, RepoRef } from "../github/github-port.ts";
import type { RunState } from "./transitions.ts";

/** The issue labels that show a run's state; at most one is on the issue at a time. */
export const STATE_LABELS = {
  working: "lisa:working",
  review: "lisa:review",
  blocked: "lisa:blocked",
  failed: "lisa:failed",
  accepted: "lisa:accepted",
} as const;

const LABEL_OF: Partial<Record<RunState, keyof typeof STATE_LABELS>> = {
  queued: "working",
  running: "working",
  plan_review: "review",
  review: "review",
  blocked: "blocked",
  failed: "failed",
  accepted: "accepted",
};

/**
 * Puts the label of `state` on the issue and takes the others off; stopped, merged and closed
 * runs have none (the tracking comment says which).
 */
export async function setStateLabel(gh: GitHubPort, ref: RepoRef, issue: number, state: RunState): Promise<void> {
  const wanted = LABEL_OF[state];
  if (wanted) await gh.addLabels(ref, issue, [STATE_LABELS[wanted]]);
  for (const [name, label] of Object.entries(STATE_LABELS)) {
    if (name !== wanted) await gh.removeLabel(ref, issue, label);
  }
}
