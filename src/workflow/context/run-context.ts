import type { LisaConfig } from "../../config/config-schema.ts";
import type { CoreDeps } from "../../deps.ts";
import type { GitHubReader } from "../../github/github-port.ts";
import type { StepPullRequestContext } from "../../publication/step-pull-request.ts";
import type { NetworkTally } from "../../sandbox/egress-proxy.ts";
import type { PassRow, RunRow } from "../../store/store.ts";

/** What every part of executing one pass of a run shares. The planner takes it too, so it lives apart from both. */
export interface RunContext {
  deps: CoreDeps;
  gh: GitHubReader;
  run: RunRow;
  pass: PassRow;
  /** The configuration in force for this pass, read from the default branch when it started. */
  config: LisaConfig;
  /** Values to redact from everything Lisa writes. */
  secrets: string[];
  /** Connections refused to each step's sandboxes in this pass, by step id, for its review package. */
  network: Map<number, NetworkTally>;
  /** Asks for the tracking comment to show the run as it stands; returns at once (see trackingPublisher). */
  publish(): void;
}

/** A step cannot go on because of the agent's work (gates red, no change, budget spent, a conflict): the human decides. */
export class BlockedError extends Error {
  override name = "BlockedError";
}

/** The run was stopped (`/lisa abort`, a closed PR) while it executed; nothing failed. */
export class StoppedError extends Error {
  override name = "StoppedError";
}

/** A person stopped this step's session (its pull request closed) while the rest of the run goes on. */
export class StepStoppedError extends Error {
  override name = "StepStoppedError";
}

/**
 * Throws StoppedError when the run is no longer running: a command (abort, a closed PR) stopped it,
 * or Lisa is shutting down and handed it back. Checked between steps and around each session and
 * gate run, so nothing new starts, and nothing is recorded as the agent's doing, once it stopped.
 */
export async function assertStillRunning(ctx: RunContext): Promise<void> {
  const run = await ctx.deps.store.runs.get(ctx.run.id);
  if (run?.state !== "running") throw new StoppedError(`the run is ${run?.state} now`);
  // A worker that lost its claim (it froze past its lease) must not go on beside the one that took over.
  if (run.worker !== ctx.deps.workerName) throw new StoppedError(`worker ${run.worker} took the run over`);
}

/**
 * The store refused a move of this run's pass or step: another writer moved it first. A run stopped
 * or taken over meanwhile stops here (StoppedError); otherwise the refusal is logged, and the pass
 * goes on from where the store says it stands.
 */
export async function refusedMove(ctx: RunContext, what: string): Promise<void> {
  await assertStillRunning(ctx);
  ctx.deps.log.warn({ runId: ctx.run.id, what }, "the store refused a move; the pass goes on");
}

/**
 * A new installation token, minted right before the git command that needs it, and added to what
 * is redacted. Tokens live an hour and a step's agent sessions can take longer: a token minted at
 * the start of the step made its push fail ("could not read Username … terminal prompts disabled").
 */
export async function freshToken(ctx: RunContext): Promise<string> {
  const token = await ctx.gh.installationToken();
  ctx.secrets.push(token);
  return token;
}

/** What a step's pull request is published with in this pass (src/publication/step-pull-request.ts). */
export const stepPullRequestContext = (ctx: RunContext): StepPullRequestContext => ({
  ...ctx,
  draftUntilReview: ctx.config.review.draft_until_review,
});
