import type { GitHubReader } from "../../github/github-port.ts";
import type { LongWait } from "../../github/write-pacer.ts";

/**
 * Follows the long waits of a run's writes on GitHub's content limits (write-pacer.ts): each asks
 * for a tracking edit, which creates nothing and so is not held by them, and another when the wait
 * ends. Returns the line the comment shows meanwhile, or undefined.
 */
export function followWriteWaits(gh: GitHubReader, publish: () => void, now: () => number): () => string | undefined {
  let wait: LongWait | undefined;
  gh.onWriteWait?.((next) => {
    wait = next;
    publish();
    // The line goes once the write's slot has come; a timer never keeps the process alive.
    setTimeout(publish, Math.max(0, next.until - now())).unref();
  });
  return () => (wait && now() < wait.until ? writeWaitNotice(wait) : undefined);
}

/** "Waiting for GitHub's content limit: 80 writes this minute; the next goes out at 04:12:30 UTC." */
export function writeWaitNotice(wait: LongWait): string {
  const count = wait.limitedBy === "hour" ? wait.hour : wait.minute;
  const at = new Date(wait.until).toISOString().slice(11, 19);
  return `Waiting for GitHub's content limit: ${count} writes this ${wait.limitedBy}; the next goes out at ${at} UTC.`;
}
