import { statfsSync } from "node:fs";
import { failRun } from "./run-changes.ts";
import type { Store } from "./store.ts";

/** SQLite's primary result code for "database or disk is full"; extended codes keep it in the low byte. */
const SQLITE_FULL = 13;

/** Free space under which a failure on the data disk is put down to it: git says "unable to write new index file" without saying why. */
const NEARLY_FULL_BYTES = 1024 ** 2;

/** Whether `error` (or what caused it) says a disk or a quota is full: ENOSPC, EDQUOT, SQLITE_FULL, or git's and the shell's words for them. */
export function isDiskFull(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { code, errcode, message } = cause as { code?: unknown; errcode?: unknown; message?: unknown };
    if (cause instanceof DiskFullError || code === "ENOSPC" || code === "EDQUOT") return true;
    if (typeof errcode === "number" && (errcode & 0xff) === SQLITE_FULL) return true;
    if (typeof message === "string" && /No space left on device|Disk quota exceeded|database or disk is full/i.test(message))
      return true;
  }
  return false;
}

/** Whether the disk that holds `dir` has (nearly) no space left for Lisa. */
export function diskNearlyFull(dir: string): boolean {
  try {
    const { bavail, bsize } = statfsSync(dir);
    return bavail * bsize < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/** What the issue is told when a run stopped because the data disk is full; `cause` is what failed, in a few words. */
export function diskFullMessage(cause: string): string {
  return `Lisa's data disk is full, so the run cannot go on (${cause}). Once an operator has freed space on the disk that holds Lisa's data directory, \`/lisa retry\` resumes the run here.`;
}

/** A run's failure, as the store keeps it: the step that was running failed with `detail`, the run with `message`. */
export interface RunFailure {
  runId: number;
  stepId: number | undefined;
  detail: string;
  message: string;
}

/**
 * A run failed while the data disk was full, and the store could not record it. The issue was told
 * (label and tracking comment); the worker writes `failure` to the store once the disk can take it.
 */
export class DiskFullError extends Error {
  override name = "DiskFullError";
  readonly failure: RunFailure;
  constructor(failure: RunFailure) {
    super(failure.message);
    this.failure = failure;
  }
}

/** Writes `failure` to the store; throws what the store threw (a full disk: nothing of it was written). */
export async function recordFailure(store: Store, failure: RunFailure): Promise<void> {
  const steps = failure.stepId === undefined ? [] : [{ id: failure.stepId, error: failure.detail }];
  const failed = await failRun(store, failure.runId, failure.message, steps);
  // A run that ended meanwhile keeps its end: there is no failure left to write.
  if (!failed) return;
}
