import type { CiSnapshot, RepoRef } from "../github/github-port.ts";
import { assertStillRunning, type RunContext } from "../workflow/run-context.ts";
import { ciKey } from "./ci-signals.ts";
import { type CiCheck, readCi } from "./read-ci.ts";

/**
 * How long a head of a repository with GitHub Actions workflows is looked at before Lisa concludes
 * no check will report: a workflow the pull request triggers starts only once GitHub has seen it.
 */
export const WORKFLOWS_GRACE_MS = 60_000;
/** Polls between webhooks start this often and back off to at most this: webhooks wake the wait sooner. */
const FIRST_POLL_MS = 1_000;
const LONGEST_POLL_MS = 30_000;

/** The head's CI once it has finished, or the deadline came: `pending` are the checks still running then. */
export interface CiOutcome {
  checks: CiCheck[];
  failed: CiCheck[];
  pending: CiCheck[];
  /** What GitHub answered at the last look, which these were read from (none when CI was not looked at). */
  snapshot: CiSnapshot | undefined;
}

/**
 * Waits for the CI of `sha` (the head Lisa pushed) to finish: woken by its webhooks, polling with
 * backoff in case one is lost. A head nothing reports on has no CI, and the wait ends at the first
 * look. The deadline (`ci.timeout`) runs from when its first check started, as GitHub recorded it,
 * so a Lisa restarted mid-wait waits only for what is left.
 */
export async function awaitCi(
  ctx: RunContext,
  ref: RepoRef,
  head: { sha: string; base: string; workflows: boolean },
): Promise<CiOutcome> {
  const { sha, base } = head;
  const { config, deps, gh } = ctx;
  const none = { checks: [], failed: [], pending: [], snapshot: undefined };
  if (!config.ci.wait) return none;
  const required = config.ci.checks ? [] : await gh.requiredChecks(ref, base);
  const firstLook = deps.now();
  let delay = FIRST_POLL_MS;
  for (;;) {
    const read = await readCi(gh, ref, sha, { ci: config.ci, required });
    const { checks } = read;
    // Workflows in the repository: their checks may be on their way even though none reports yet.
    const starting = head.workflows && checks.length === 0 && deps.now() - firstLook < WORKFLOWS_GRACE_MS;
    if (checks.length === 0 && !starting) return none;
    const pending = checks.filter((check) => check.state === "pending");
    const failed = checks.filter((check) => check.state === "failed");
    if (pending.length === 0 && !starting) return { checks, failed, pending, snapshot: read.snapshot };
    const started = Math.min(firstLook, ...checks.map((check) => Date.parse(check.since ?? "") || firstLook));
    const left = started + config.ci.timeout - deps.now();
    if (left <= 0) return { checks, failed, pending, snapshot: read.snapshot };
    // The tracking comment says the step waits for CI, once there is CI to wait for.
    if (delay === FIRST_POLL_MS) ctx.publish();
    await (deps.ciSignals?.wait(ciKey(ref.owner, ref.repo, sha), Math.min(delay, left)) ??
      new Promise((resolve) => setTimeout(resolve, Math.min(delay, left))));
    await assertStillRunning(ctx);
    delay = Math.min(delay * 2, LONGEST_POLL_MS);
  }
}
