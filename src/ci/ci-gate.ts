import { readdirSync } from "node:fs";
import path from "node:path";
import { commentOnce } from "../github/ensure-comment.ts";
import type { RepoRef } from "../github/github-port.ts";
import { code } from "../reporting/untrusted.ts";
import type { GateLine } from "../reporting/views.ts";
import { BlockedError, type RunContext } from "../workflow/run-context.ts";
import { awaitCi } from "./await-ci.ts";
import { describeCiFailures } from "./ci-report.ts";

/** A CI failure for the next fix iteration: its report (redacted, still to be fenced) and how it reads for "the same twice". */
export interface CiFailure {
  report: string;
  signature: string;
  names: string[];
}

/** How much of a failing check's report is kept with the step for the tracking comment. */
const REPORT_KEPT = 4_000;

/**
 * The pull request's own CI as a gate on the head Lisa pushed: waits for it (awaitCi), lists each
 * check with its result among the step's gates (and which an earlier fix of this pass made green),
 * says on the pull request when review starts without checks still running, and returns what
 * failed for the agent to fix; failing as it failed before blocks the step instead.
 */
export async function ciGate(
  ctx: RunContext,
  stepId: number,
  pr: { ref: RepoRef; number: number; sha: string; base: string; workflows: boolean },
  earlier: readonly CiFailure[],
): Promise<CiFailure | undefined> {
  const { deps, gh } = ctx;
  const { store } = deps;
  const outcome = await awaitCi(ctx, pr.ref, pr);
  if (outcome.checks.length === 0) return undefined;
  const fixedBefore = new Set(earlier.flatMap((failure) => failure.names));
  const failed =
    outcome.failed.length && outcome.snapshot
      ? {
          ...(await describeCiFailures(gh, pr.ref, outcome.snapshot, outcome.failed, ctx.secrets)),
          names: outcome.failed.map((check) => check.name),
        }
      : undefined;
  const lines: GateLine[] = outcome.checks.map((check) => ({
    command: check.name,
    ci: true,
    passed: check.state !== "failed",
    ...(check.state === "pending" ? { pending: true } : {}),
    ...(check.state === "passed" && fixedBefore.has(check.name) ? { fixed: true } : {}),
    ...(check.state === "failed" && failed ? { output: failed.report.slice(-REPORT_KEPT) } : {}),
  }));
  const gates = (JSON.parse((await store.steps.get(stepId)).gates ?? "[]") as GateLine[]).filter((line) => !line.ci);
  await store.steps.record(stepId, { gates: JSON.stringify([...gates, ...lines]) });
  if (outcome.pending.length) {
    const minutes = Math.max(1, Math.round(ctx.config.ci.timeout / 60_000));
    const names = outcome.pending.map((check) => code(check.name, { secrets: ctx.secrets, max: 100 })).join(", ");
    await commentOnce(
      gh,
      pr.ref,
      pr.number,
      `<!-- lisa:ci-wait ${pr.sha} -->`,
      `CI still running after ${minutes} min: review may start; Lisa will not wait longer. Still running at \`${pr.sha.slice(0, 7)}\`: ${names}.`,
    );
  }
  if (!failed) return undefined;
  if (earlier.at(-1)?.signature === failed.signature) {
    const names = failed.names.map((name) => code(name, { secrets: ctx.secrets, max: 100 })).join(", ");
    throw new BlockedError(`CI ${names} failed the same way twice in a row; the agent's fix did not change it.`);
  }
  ctx.publish();
  return failed;
}

/** Whether the worktree has GitHub Actions workflows, whose checks may start a moment after the push. */
export function hasWorkflows(dir: string): boolean {
  try {
    return readdirSync(path.join(dir, ".github", "workflows")).some((name) => /\.ya?ml$/.test(name));
  } catch {
    return false;
  }
}
