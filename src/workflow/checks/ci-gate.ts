import { readdirSync } from "node:fs";
import path from "node:path";
import { type CiFailure, ciChecksOf, ciSignature, isCiGate } from "../../ci/ci-failure.ts";
import type { RepoRef } from "../../github/github-port.ts";
import { commentOnce } from "../../publication/ensure-comment.ts";
import { code } from "../../reporting/untrusted.ts";
import type { GateLine } from "../../reporting/views.ts";
import { BlockedError, type RunContext } from "../context/run-context.ts";
import { awaitCi } from "./await-ci.ts";
import { describeCiFailures } from "./ci-report.ts";

/** How much of a failing check's report is kept with the step for the tracking comment. */
const REPORT_KEPT = 4_000;

/**
 * The pull request's own CI as a gate on the head Lisa pushed: waits for it (awaitCi), lists each
 * check with its result among the step's gates (and which an earlier fix of this pass made green),
 * says on the pull request when review starts without checks still running, and returns what
 * failed for the agent to fix; failing as it failed before blocks the step instead. What came
 * before is read from the store (the agent's reflections on CI failures), so it survives a restart.
 */
export async function ciGate(
  ctx: RunContext,
  stepId: number,
  pr: { ref: RepoRef; number: number; sha: string; base: string; workflows: boolean },
): Promise<CiFailure | undefined> {
  const { deps, gh } = ctx;
  const { store } = deps;
  // The commit this pass built on: the checks that reported there are the CI this head should get.
  const before = (await store.steps.inPass(stepId, ctx.pass.id))?.start_sha ?? (await store.steps.get(stepId)).start_sha;
  const outcome = await awaitCi(ctx, pr.ref, { ...pr, before: before ?? undefined });
  if (outcome.checks.length === 0) return undefined;
  const step = await store.steps.get(stepId);
  const fixes = (await store.learnings.reflections(stepId, ctx.pass.number)).filter((r) => isCiGate(r.gate));
  const fixedBefore = new Set(fixes.flatMap((r) => ciChecksOf(r.gate)));
  let failed: CiFailure | undefined;
  if (outcome.failed.length && outcome.snapshot) {
    const described = await describeCiFailures(gh, pr.ref, outcome.snapshot, outcome.failed, ctx.secrets);
    failed = {
      pass: ctx.pass.number,
      base: step.iteration_base,
      report: described.report,
      signature: ciSignature(described.signature),
      names: outcome.failed.map((check) => check.name),
    };
  }
  const lines: GateLine[] = outcome.checks.map((check) => ({
    command: check.name,
    ci: true,
    passed: check.state !== "failed",
    ...(check.state === "pending" ? { pending: true } : {}),
    ...(check.state === "passed" && fixedBefore.has(check.name) ? { fixed: true } : {}),
    ...(check.state === "failed" && failed ? { output: failed.report.slice(-REPORT_KEPT) } : {}),
  }));
  const gates = (step.gates ?? []).filter((line) => !line.ci);
  await store.steps.record(stepId, { gates: [...gates, ...lines] });
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
  // The last CI failure of this try the agent was sent back for, and answered.
  const last = fixes.filter((r) => r.iteration > step.iteration_base).at(-1);
  if (last?.signature === failed.signature) {
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
