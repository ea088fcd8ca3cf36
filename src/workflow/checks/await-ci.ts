import { ciKey } from "../../ci/ci-signals.ts";
import type { CiSnapshot, RepoRef } from "../../github/github-port.ts";
import { assertStillRunning, type RunContext } from "../context/run-context.ts";
import { type CiCheck, readCi } from "./read-ci.ts";

/**
 * How long a head nothing reports on yet is looked at, where CI is expected, before Lisa concludes no
 * check will report: a workflow the pull request triggers, or another CI App, starts only once it
 * has heard of the push.
 */
export const CI_START_GRACE_MS = 60_000;
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
 * backoff in case one is lost. CI is expected where the repository has GitHub Actions workflows, or
 * where checks reported on `before` (the commit the pass built on: the base, or the pull request's
 * earlier head); a head nothing reports on then gets CI_START_GRACE_MS to start. Elsewhere a head
 * nothing reports on has no CI, and the wait ends at the first look. The deadline (`ci.timeout`)
 * runs from when its first check started, as GitHub recorded it, so a Lisa restarted mid-wait
 * waits only for what is left.
 */
export async function awaitCi(
  ctx: RunContext,
  ref: RepoRef,
  head: { sha: string; base: string; workflows: boolean; before?: string | undefined },
): Promise<CiOutcome> {
  const { sha, base } = head;
  const { config, deps, gh } = ctx;
  const none = { checks: [], failed: [], pending: [], snapshot: undefined };
  if (!config.ci.wait) return none;
  const required = config.ci.checks ? [] : await gh.requiredChecks(ref, base);
  const firstLook = deps.now();
  // Read once, and only for a head nothing reports on yet: a CI App that reported on the commit before will report here too.
  let reportedBefore: boolean | undefined;
  const expected = async () => {
    if (head.workflows) return true;
    if (!head.before) return false;
    reportedBefore ??= (await readCi(gh, ref, head.before, { ci: config.ci, required })).checks.length > 0;
    return reportedBefore;
  };
  let delay = FIRST_POLL_MS;
  for (;;) {
    const read = await readCi(gh, ref, sha, { ci: config.ci, required });
    const { checks } = read;
    const starting = checks.length === 0 && deps.now() - firstLook < CI_START_GRACE_MS && (await expected());
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
