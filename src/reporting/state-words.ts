import type { TrackingView } from "./tracking-view.ts";

/** A run's state as a reply says it after "Run 3 is …": words, never the stored name. */
export const STATE_WORDS: Record<TrackingView["state"], string> = {
  queued: "queued, waiting for a worker",
  running: "working",
  plan_review: "waiting for its plan to be reviewed",
  blocked: "blocked",
  review: "waiting for review",
  accepted: "accepted",
  stopped: "stopped",
  failed: "failed",
  merged: "merged",
  closed: "closed",
};
