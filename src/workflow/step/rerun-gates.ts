import path from "node:path";
import { parseConfig } from "../../config/parse-config.ts";
import type { CoreDeps } from "../../deps.ts";
import type { CheckReport } from "../../github/github-port.ts";
import { createCheck, trackingUrl, updateCheck } from "../../publication/check-runs.ts";
import { describeGates } from "../../reporting/describe-gate.ts";
import { mention, shortSha } from "../../reporting/format.ts";
import { code } from "../../reporting/untrusted.ts";
import { checkoutDetached } from "../../workspace/create-worktree.ts";
import { git } from "../../workspace/git.ts";
import { removeWorktree } from "../../workspace/remove-worktree.ts";
import { syncMirror } from "../../workspace/sync-mirror.ts";
import { mirrorPath, worktreesRoot } from "../../workspace/workspace-paths.ts";
import { freshToken, type RunContext } from "../context/run-context.ts";
import type { Checkout } from "../session/invoke-agent.ts";
import { runStepGates } from "./build-step.ts";
import { prepareWorktree } from "./prepare-worktree.ts";

/**
 * Runs the gates of a run at rest again at its step's head, as `sender` asked by pressing "Re-run"
 * on Lisa's check: with the config on the default branch now (as `/lisa retry` takes it), in a
 * detached worktree of the head, set up as a session's would be, into a new "Lisa" check run (the
 * newest is the one the merge box shows). What they say changes no state of the run.
 */
export async function rerunGates(
  deps: CoreDeps,
  runId: number,
  stepId: number,
  gesture: { headSha: string; sender: string },
): Promise<string> {
  const run = await deps.store.runs.get(runId);
  const step = await deps.store.steps.get(stepId);
  const pass = await deps.store.passes.current(runId);
  if (!run || !pass) return "ignored: the run has no pass";
  const gh = await deps.github(run.installation_id);
  const stepRef = { owner: step.owner, repo: step.repo };
  const ctx: RunContext = {
    deps,
    gh,
    run,
    pass,
    config: parseConfig(await gh.readConfig({ owner: run.owner, repo: run.repo })),
    secrets: [...deps.heldSecrets],
    network: new Map(),
    publish: () => undefined,
  };
  const asked = `${mention(gesture.sender)} asked Lisa to run the gates again at \`${shortSha(gesture.headSha)}\`, with the configuration on the default branch now.`;
  const details = trackingUrl(run, step);
  const link = details ? `\n\nThe run's progress: [tracking comment](${details}).` : "";
  const id = await createCheck(gh, stepRef, gesture.headSha, {
    title: "Running the gates again",
    summary: `${asked}${link}`,
    ...(details ? { detailsUrl: details } : {}),
  });
  const dir = path.join(worktreesRoot(deps.workspace), `run-${run.id}-step-${step.position}-rerun`);
  let report: CheckReport;
  try {
    await syncMirror(deps.workspace, stepRef, await freshToken(ctx));
    await checkoutDetached(deps.workspace, stepRef, { base: step.branch, path: dir });
    const at = (await git(dir, ["rev-parse", "HEAD"])).trim();
    if (at !== gesture.headSha) throw new Error(`the branch moved to \`${shortSha(at)}\` meanwhile`);
    const checkout: Checkout = {
      ref: stepRef,
      host: { path: dir, branch: step.branch, startSha: at, reused: false },
      native: undefined,
      nativePath: undefined,
      scope: { mirrors: [mirrorPath(deps.workspace, stepRef)] },
    };
    await prepareWorktree(ctx, step, checkout);
    const results = await runStepGates(ctx, step.id, checkout);
    const passed = results.every((r) => r.passed);
    const lines = results.map(({ command, passed }) => ({ command, passed }));
    report = {
      conclusion: passed ? "success" : "failure",
      title: passed ? "The gates pass again" : "A gate fails at this head",
      summary: `${asked}\n\n${lines.length ? `Gates at this head: ${describeGates(lines, pass.number, ctx.secrets)}` : "No gates are configured."}${link}`,
    };
  } catch (error) {
    deps.log.warn({ err: error, runId: run.id, stepId: step.id }, "could not run the gates again");
    report = {
      conclusion: "failure",
      title: "The gates could not run again",
      summary: `${asked}\n\nThey could not run: ${code((error as Error).message, { secrets: ctx.secrets })}${link}`,
    };
  } finally {
    await removeWorktree(deps.workspace, stepRef, { path: dir }).catch(() => undefined);
  }
  if (id !== undefined) await updateCheck(gh, stepRef, id, { ...report, ...(details ? { detailsUrl: details } : {}) });
  return `gates run again at ${shortSha(gesture.headSha)}: ${report.conclusion}`;
}
