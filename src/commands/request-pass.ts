import type { LisaConfig } from "../config/config-schema.ts";
import { labelOf, parseConfig } from "../config/parse-config.ts";
import { openPassComment } from "../publication/pass-comment.ts";
import { publishRunState } from "../publication/publish-state.ts";
import { publishTracking } from "../publication/publish-tracking.ts";
import { STATE_WORDS } from "../reporting/state-words.ts";
import * as changes from "../store/run-changes.ts";
import type { NewGuidance, PassRow } from "../store/store.ts";
import type { Scene } from "./gesture-scene.ts";
import { steerRunningPass } from "./steer-running-pass.ts";

/** Guidance kept per pass: the prompt and the package must stay readable. */
const MAX_GUIDANCE_CHARS = 30_000;

/**
 * Redirect, change request and continue all land here: pass N+1 now when the run waits, queued
 * behind the pass under way otherwise, refused past `limits.max_passes` (read from the default
 * branch now, so raising it is an ordinary commit).
 */
export async function requestPass(
  scene: Scene,
  request: { trigger: PassRow["trigger"]; by: string; items: NewGuidance[]; what: string },
): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  const issueRef = { owner: run.owner, repo: run.repo };
  let raw: unknown;
  let config: LisaConfig;
  try {
    raw = await gh.readConfig(issueRef);
    config = parseConfig(raw);
  } catch (error) {
    await scene.reply(
      `Lisa cannot start another pass: ${(error as Error).message}\n\nFix the file on the default branch and ask again.`,
    );
    return "config invalid";
  }
  const items = capGuidance(request.items);
  const current = (await deps.store.runs.get(run.id)) ?? run;
  if (current.state === "merged" || current.state === "closed") {
    await scene.reply(
      `Run ${run.id} has ended (${current.state}). Add the \`${labelOf(raw)}\` label to the issue again to start a new one.`,
    );
    return "run ended";
  }
  if (current.state === "plan_review") {
    // The plan waits for review: the same pass plans again, with this guidance.
    const pass = await deps.store.passes.current(run.id);
    const planning = (await deps.store.steps.of(run.id)).find((s) => s.position === 0);
    if (!pass || !planning) return "no plan waits";
    const change = { runId: run.id, passId: pass.id, passNumber: pass.number, planningStepId: planning.id, guidance: items };
    if (!(await changes.replanRun(deps.store, change, { actor: request.by }))) return "replan lost a race";
    await publishRunState(deps, gh, run.id);
    await scene.reply(`Lisa plans pass ${pass.number} again with ${request.what}.`);
    return "plan: planning again";
  }
  if (current.state === "running" || current.state === "queued") {
    const pass = await deps.store.passes.current(run.id);
    // Guidance joins a pass whose plan is not fixed yet (the planner runs again with it); after
    // that it waits for one next pass.
    const joins = pass?.state === "queued" || pass?.state === "planning" ? pass.id : undefined;
    const steered = !joins && pass ? await steerRunningPass(scene, pass, items) : undefined;
    if (steered) return steered;
    await deps.store.guidance.add(run.id, items, joins);
    const queued = (await deps.store.guidance.queued(run.id)).length;
    await scene.reply(
      joins
        ? `Taken into pass ${current.current_pass}: its plan is not fixed yet, so the plan will include it.`
        : `Queued for pass ${current.current_pass + 1}, after the current pass (${queued} request${queued === 1 ? "" : "s"} waiting).`,
    );
    await publishTracking(deps, gh, run.id);
    return joins ? "guidance joined the pass" : "guidance queued";
  }
  if (current.current_pass >= config.limits.max_passes) {
    await scene.reply(
      `Pass ${current.current_pass} of ${config.limits.max_passes} is done (\`limits.max_passes\`). Approve the pull requests to accept them, raise the limit in \`.github/lisa.yml\`, or close them.`,
    );
    return "max passes reached";
  }
  const pass = await deps.store.passes.startNext(run.id, {
    trigger: request.trigger,
    requestedBy: request.by,
    config: raw,
    guidance: items,
  });
  if (!pass) {
    await scene.reply(`Run ${run.id} is ${STATE_WORDS[current.state]}; it cannot start another pass now.`);
    return `refused in ${current.state}`;
  }
  await publishRunState(deps, gh, run.id);
  // On a PR of the run, the pass's own comment is the answer (docs/operations.md): the pass edits it as it
  // goes. With several PRs the planner decides which the pass touches; one it leaves out is told so at the gate.
  const here = (await deps.store.steps.of(run.id)).find((step) => step.position > 0 && step.id === scene.step?.id);
  if (here && here.pr_number !== null)
    await openPassComment(deps, gh, { run: current, pass, step: here, maxPasses: config.limits.max_passes });
  else await scene.reply(`⏳ Pass ${pass.number} started by ${request.what}.`);
  return `pass ${pass.number} queued`;
}

/** At most 50 items and 30,000 characters per request: the prompt and the package must stay readable. */
function capGuidance(items: NewGuidance[]): NewGuidance[] {
  let total = 0;
  return items.slice(0, 50).filter((item) => {
    total += item.body.length;
    return total <= MAX_GUIDANCE_CHARS;
  });
}
