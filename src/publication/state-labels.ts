import type { GitHubReader, RepoRef } from "../github/github-port.ts";
import { publisherOf } from "../github/github-publisher.ts";
import type { RunState } from "../store/transitions.ts";

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

/** The label that shows `state` on the issue; stopped, merged and closed runs have none. */
export function stateLabelOf(state: RunState): string | undefined {
  const kind = LABEL_OF[state];
  return kind && STATE_LABELS[kind];
}

/**
 * Puts the label of `state` on the issue and takes the others off; stopped, merged and closed
 * runs have none (the tracking comment says which). It reads the labels first and makes one write
 * at most: every write waits its turn in the write pacing, and deleting four absent labels at each
 * state change was most of a run's writes (and all of them 404s). Swapping one state label for
 * another replaces the issue's labels with those read plus the new one; a label a human adds in
 * the moment between the read and the write is lost, which GitHub's API gives no way to avoid
 * short of two writes.
 */
export async function setStateLabel(gh: GitHubReader, ref: RepoRef, issue: number, state: RunState): Promise<void> {
  const wanted = stateLabelOf(state);
  const publisher = publisherOf(gh);
  const present = await gh.labelsOf(ref, issue);
  const isState = (label: string) => (Object.values(STATE_LABELS) as string[]).includes(label.toLowerCase());
  const stale = present.filter((label) => isState(label) && label.toLowerCase() !== wanted);
  const missing = wanted !== undefined && !present.some((label) => label.toLowerCase() === wanted);
  if (missing && stale.length > 0) {
    await publisher.setLabels(ref, issue, [...present.filter((label) => !stale.includes(label)), wanted]);
  } else if (missing) {
    await publisher.addLabels(ref, issue, [wanted]);
  } else {
    for (const label of stale) await publisher.removeLabel(ref, issue, label);
  }
}

/** Closes the issue as completed, unless it is closed already. Whether it was open. */
export const closeIssue = (gh: GitHubReader, ref: RepoRef, issue: number): Promise<boolean> =>
  publisherOf(gh).ensureIssueClosed(ref, issue);
