import { startingPassView } from "../../publication/pass-comment.ts";
import { reflectionViews } from "../../publication/reflection-views.ts";
import { publishPackage, publishThreadReplies } from "../../publication/review-package.ts";
import { type PackageView, renderReviewPackage } from "../../reporting/review-package.ts";
import type { StepRow } from "../../store/store.ts";
import { gitLog } from "../../workspace/mirror-history.ts";
import { editedAnchors } from "../checks/anchors.ts";
import type { RunContext } from "../context/run-context.ts";
import { agentEditedMemory } from "./memory.ts";
import { wipBranch } from "./push-step.ts";

/**
 * The review package of one pass on one PR: created when the pass starts on the PR (so the
 * timeline shows it before the pass's commits), found again by its marker after a crash, and
 * edited into the full package when the pass ends.
 */
export async function openPackage(ctx: RunContext, stepId: number): Promise<void> {
  await writePackage(ctx, stepId, "working");
}

export async function finishPackage(ctx: RunContext, stepId: number, phase: PackageView["phase"]): Promise<void> {
  await recordGuidanceStatus(ctx, stepId);
  await writePackage(ctx, stepId, phase);
  await publishThreadReplies(ctx, stepId);
}

/**
 * Keeps what the agent said of each guidance item (`g1`, `g2`, … numbered over the whole pass, as
 * the prompt numbered them) for the package, the thread replies and the final report.
 */
async function recordGuidanceStatus(ctx: RunContext, stepId: number): Promise<void> {
  const { store } = ctx.deps;
  const record = await store.steps.inPass(stepId, ctx.pass.id);
  const said = record?.manifest?.guidance ?? [];
  for (const [index, item] of (await store.guidance.forPass(ctx.pass.id)).entries()) {
    const status = said.find((g) => g.id === `g${index + 1}`);
    if (status) await store.guidance.recordStatus(item.id, status.status, status.note ?? null);
  }
}

async function writePackage(ctx: RunContext, stepId: number, phase: PackageView["phase"]): Promise<void> {
  const step = await ctx.deps.store.steps.get(stepId);
  if (step.pr_number === null || !(await ctx.deps.store.steps.inPass(stepId, ctx.pass.id))) return;
  await publishPackage(ctx, step, renderReviewPackage(await packageView(ctx, step, phase)));
}

async function packageView(ctx: RunContext, step: StepRow, phase: PackageView["phase"]): Promise<PackageView> {
  const { deps, pass, run, config } = ctx;
  const { store } = deps;
  const record = await store.steps.inPass(step.id, pass.id);
  const previous = (await store.steps.history(step.id)).filter((r) => r.number < pass.number && r.gates).at(-1);
  const previousGates = previous?.gates ?? [];
  const gates = (record?.gates ?? step.gates ?? []).map((g) => ({
    ...g,
    regressed: !g.passed && previousGates.some((p) => p.command === g.command && p.passed),
  }));
  const manifest = record?.manifest ?? undefined;
  const human = record?.human_shas ?? [];
  const range =
    record?.start_sha && record.end_sha
      ? { from: record.start_sha, to: record.end_sha, ...compareLink(step, record.start_sha, record.end_sha) }
      : undefined;
  const commits = range ? await gitLog(deps.workspace, { owner: step.owner, repo: step.repo }, range).catch(() => []) : [];
  const sessions = (await store.sessions.of(step.id)).filter((s) => s.pass === pass.number);
  const siblings = (await store.steps.of(run.id)).flatMap((s) => (s.gate ? [s.gate] : []));
  const start = await startingPassView(store, { run, pass, step, maxPasses: config.limits.max_passes, secrets: ctx.secrets });
  return {
    ...start,
    phase,
    ...(range ? { range } : {}),
    commits: [
      ...human.map((c) => ({ ...c, human: true })),
      ...commits.filter((c) => !human.some((h) => h.sha === c.sha)).map((c) => ({ ...c, human: false })),
    ],
    files: record?.changed_files ?? [],
    gates,
    reflections: reflectionViews(await store.learnings.reflections(step.id, pass.number)),
    anchorEdits: await editedAnchors(ctx, step, record, manifest),
    ...((await agentEditedMemory(ctx, step, record, manifest)) ? { memoryEdit: config.memory.file } : {}),
    ...(record?.end_sha ? { headSha: record.end_sha } : {}),
    openQuestions: manifest?.open_questions ?? [],
    ...(manifest?.recommendation
      ? { recommendation: { kind: manifest.recommendation, ...(manifest.pass_summary ? { text: manifest.pass_summary } : {}) } }
      : {}),
    refinements: manifest?.refinements ?? [],
    ...(record?.block_reason
      ? {
          block: {
            reason: record.block_reason,
            ...(manifest?.blocked ? { tried: manifest.blocked.tried, needed: manifest.blocked.needed } : {}),
            ...(record.wip_sha ? wipLink(step) : {}),
          },
        }
      : {}),
    cost: {
      sessions: sessions.length,
      providers: [...new Set(sessions.map((s) => s.provider))],
      durationMs: sessions.reduce((sum, s) => sum + ((s.finished_at ?? s.started_at) - s.started_at), 0),
      passUsd: sessions.reduce((sum, s) => sum + s.cost_usd, 0),
      judgeUsd: sessions.filter((s) => s.purpose === "judge").reduce((sum, s) => sum + s.cost_usd, 0),
      judged: sessions.some((s) => s.purpose === "judge"),
      runUsd: await store.runs.cost(run.id),
      limitUsd: config.limits.max_cost_usd,
    },
    ...(ctx.network.get(step.id)?.refused ? { network: ctx.network.get(step.id) } : {}),
    siblings,
  };
}

/** The repository's page on GitHub, from its PR's (`…/owner/repo/pull/5`). */
function repoUrlOf(step: StepRow): string | undefined {
  const repoUrl = step.pr_url?.replace(/\/pull\/\d+$/, "");
  return repoUrl && repoUrl !== step.pr_url ? repoUrl : undefined;
}

/** The branch a blocked attempt was pushed to, and where GitHub shows it (beside the PR it belongs to). */
function wipLink(step: StepRow): { wipRef: string; wipUrl?: string } {
  const wipRef = wipBranch(step.branch);
  const repoUrl = repoUrlOf(step);
  return repoUrl ? { wipRef, wipUrl: `${repoUrl}/tree/${encodeURI(wipRef)}` } : { wipRef };
}

/** GitHub's comparison of the pass's commits. */
function compareLink(step: StepRow, from: string, to: string): { compareUrl?: string } {
  const repoUrl = repoUrlOf(step);
  return repoUrl ? { compareUrl: `${repoUrl}/compare/${from}...${to}` } : {};
}
