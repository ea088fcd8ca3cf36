import { ensureComment } from "../github/ensure-comment.ts";
import { guidanceHere, startingPassView } from "../publication/pass-comment.ts";
import { reflectionViews } from "../publication/reflection-views.ts";
import { currentManifest } from "../reporting/manifest-schema.ts";
import { type PackageView, passMarker, renderReviewPackage } from "../reporting/review-package.ts";
import type { FileChange, GateLine, PrGate } from "../reporting/views.ts";
import type { StepRow } from "../store/store.ts";
import type { RunContext } from "../workflow/run-context.ts";
import { gitLog } from "../workspace/mirror-history.ts";
import { editedAnchors } from "./anchors.ts";
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
  await replyInThreads(ctx, stepId);
}

/**
 * Keeps what the agent said of each guidance item (`g1`, `g2`, … numbered over the whole pass, as
 * the prompt numbered them) for the package, the thread replies and the final report.
 */
async function recordGuidanceStatus(ctx: RunContext, stepId: number): Promise<void> {
  const { store } = ctx.deps;
  const record = await store.steps.inPass(stepId, ctx.pass.id);
  const said = currentManifest({ manifest: record?.manifest ?? null })?.guidance ?? [];
  for (const [index, item] of (await store.guidance.forPass(ctx.pass.id)).entries()) {
    const status = said.find((g) => g.id === `g${index + 1}`);
    if (status) await store.guidance.recordStatus(item.id, status.status, status.note ?? null);
  }
}

async function writePackage(ctx: RunContext, stepId: number, phase: PackageView["phase"]): Promise<void> {
  const { deps, gh, pass } = ctx;
  const step = await deps.store.steps.get(stepId);
  const record = await deps.store.steps.inPass(stepId, pass.id);
  if (step.pr_number === null || !record) return;
  const ref = { owner: step.owner, repo: step.repo };
  const body = renderReviewPackage(await packageView(ctx, step, phase));
  const marker = passMarker(ctx.run.id, pass.number, stepId);
  const id = await ensureComment(gh, ref, step.pr_number, marker, body, record.package_comment_id);
  if (id !== record.package_comment_id) await deps.store.steps.recordInPass(record.id, { package_comment_id: id });
}

async function packageView(ctx: RunContext, step: StepRow, phase: PackageView["phase"]): Promise<PackageView> {
  const { deps, pass, run, config } = ctx;
  const { store } = deps;
  const record = await store.steps.inPass(step.id, pass.id);
  const previous = (await store.steps.history(step.id)).filter((r) => r.number < pass.number && r.gates).at(-1);
  const previousGates = JSON.parse(previous?.gates ?? "[]") as GateLine[];
  const gates = (JSON.parse(record?.gates ?? step.gates ?? "[]") as GateLine[]).map((g) => ({
    ...g,
    regressed: !g.passed && previousGates.some((p) => p.command === g.command && p.passed),
  }));
  const manifest = currentManifest({ manifest: record?.manifest ?? null });
  const human = JSON.parse(record?.human_shas ?? "[]") as { sha: string; author: string; subject: string }[];
  const range =
    record?.start_sha && record.end_sha
      ? { from: record.start_sha, to: record.end_sha, ...compareLink(step, record.start_sha, record.end_sha) }
      : undefined;
  const commits = range ? await gitLog(deps.workspace, { owner: step.owner, repo: step.repo }, range).catch(() => []) : [];
  const sessions = (await store.sessions.of(step.id)).filter((s) => s.pass === pass.number);
  const siblings = (await store.steps.of(run.id)).filter((s) => s.gate).map((s) => JSON.parse(s.gate ?? "{}") as PrGate);
  const start = await startingPassView(store, { run, pass, step, maxPasses: config.limits.max_passes, secrets: ctx.secrets });
  return {
    ...start,
    phase,
    ...(range ? { range } : {}),
    commits: [
      ...human.map((c) => ({ ...c, human: true })),
      ...commits.filter((c) => !human.some((h) => h.sha === c.sha)).map((c) => ({ ...c, human: false })),
    ],
    files: JSON.parse(record?.changed_files ?? "[]") as FileChange[],
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
      runUsd: await store.runs.cost(run.id),
      limitUsd: config.limits.max_cost_usd,
    },
    ...(ctx.network.get(step.id)?.refused ? { network: ctx.network.get(step.id) } : {}),
    siblings,
  };
}

/**
 * Each inline comment used as guidance gets one answer in its thread, with what the agent said of
 * it; a hidden marker finds it again after a crash so it is never posted twice.
 */
async function replyInThreads(ctx: RunContext, stepId: number): Promise<void> {
  const { deps, gh } = ctx;
  const step = await deps.store.steps.get(stepId);
  if (step.pr_number === null) return;
  const ref = { owner: step.owner, repo: step.repo };
  const manifest = currentManifest(step);
  const items = await guidanceHere(deps.store, ctx.pass.id, step);
  const threads = items.filter((g) => g.github_id !== null && !g.replied);
  if (threads.length === 0) return;
  const existing = await gh.listPullComments(ref, step.pr_number);
  const numbered = await deps.store.guidance.forPass(ctx.pass.id);
  for (const item of threads) {
    const said = manifest?.guidance?.find((g) => g.id === `g${numbered.findIndex((g) => g.id === item.id) + 1}`);
    const marker = `<!-- lisa:thread guidance=${item.id} -->`;
    // GitHub takes replies to a thread's first comment only, and files them under it.
    const commented = existing.find((c) => c.id === item.github_id);
    const thread = commented?.inReplyTo ?? item.github_id ?? 0;
    if (!existing.some((c) => c.body.includes(marker))) {
      const status = said ? said.status.replace(/_/g, " ") : "worked on";
      const note = said?.note ? `: ${said.note.replace(/\s+/g, " ").slice(0, 500)}` : "";
      const head = (await deps.store.steps.get(stepId)).head_sha?.slice(0, 7) ?? "the new head";
      await gh.replyToReviewComment(
        ref,
        step.pr_number,
        thread,
        `${marker}\nPass ${ctx.pass.number}: ${status}${note} (at \`${head}\`).`,
      );
    }
    await deps.store.guidance.markReplied(item.id);
  }
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
