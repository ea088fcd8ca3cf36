import type { CoreDeps } from "../deps.ts";
import type { GitHubReader } from "../github/github-port.ts";
import { publisherOf } from "../github/github-publisher.ts";
import type { PackageView } from "../reporting/package-view.ts";
import { passMarker, renderReviewPackage } from "../reporting/review-package.ts";
import type { GuidanceRow, PassRow, RunRow, StepRow, Store } from "../store/store.ts";
import { ensureComment } from "./ensure-comment.ts";
import { guidanceView } from "./guidance-view.ts";

// The comment a pass keeps on each pull request it works on: opened as the pass
// starts, found again by its marker, and edited into the review package when the pass ends.

/** Guidance said on this PR's repository, or on the issue: what the pass was asked here. */
export async function guidanceHere(store: Store, passId: number, step: StepRow): Promise<GuidanceRow[]> {
  return (await store.guidance.forPass(passId)).filter(
    (g) =>
      g.owner === null ||
      (g.owner.toLowerCase() === step.owner.toLowerCase() && g.repo?.toLowerCase() === step.repo.toLowerCase()),
  );
}

/** The pass comment as the pass starts on `step`'s PR: who started it, and the guidance it takes there. */
export async function startingPassView(
  store: Store,
  at: { run: RunRow; pass: PassRow; step: StepRow; maxPasses: number; secrets: readonly string[] },
): Promise<PackageView> {
  const { run, pass, step } = at;
  const items = await guidanceHere(store, pass.id, step);
  return {
    runId: run.id,
    pass: pass.number,
    maxPasses: at.maxPasses,
    stepId: step.id,
    repo: `${step.owner}/${step.repo}`,
    phase: "working",
    trigger: {
      kind: pass.trigger,
      by: pass.requested_by,
      inlineCount: items.filter((g) => g.source === "inline").length,
      ...(items[0] ? { excerpt: items[0].body.slice(0, 300) } : {}),
      ...(items[0]?.url ? { url: items[0].url } : {}),
    },
    commits: [],
    files: [],
    gates: [],
    guidance: items.map(guidanceView),
    openQuestions: [],
    refinements: [],
    cost: { sessions: 0, providers: [], durationMs: 0, passUsd: 0, runUsd: 0, limitUsd: 0 },
    siblings: [],
    secrets: at.secrets,
  };
}

/**
 * The comment a gesture on this PR opened for a pass whose plan then left the PR out would say
 * "updated when the pass ends" forever: at the gate it says the pass left the PR as it is, and
 * where the pass's packages are. One lookup per PR left out; nothing when no comment was opened.
 */
export async function settleLeftOutPassComment(
  gh: GitHubReader,
  at: { run: RunRow; pass: Pick<PassRow, "number">; step: StepRow; touched: readonly StepRow[] },
): Promise<void> {
  const { run, pass, step } = at;
  if (step.pr_number === null) return;
  const ref = { owner: step.owner, repo: step.repo };
  const marker = passMarker(run.id, pass.number, step.id);
  const found = await gh.findComment(ref, step.pr_number, marker);
  if (found === undefined) return;
  const where = at.touched.flatMap((s) => (s.pr_url ? [s.pr_url] : [])).join(", ") || "none";
  const text = `Pass ${pass.number} left this pull request as it is: its plan changed other repositories only. Its review packages are on ${where}.`;
  await publisherOf(gh).updateComment(
    ref,
    found,
    `${marker}\n### Lisa · pass ${pass.number} · ${step.owner}/${step.repo} · not part of this pass\n\n${text}`,
  );
}

/**
 * Opens the comment of a pass that a gesture on this PR just started, as the answer to that
 * gesture (docs/operations.md): the pass edits this same comment when it starts work and when it ends.
 */
export async function openPassComment(
  deps: CoreDeps,
  gh: GitHubReader,
  at: { run: RunRow; pass: PassRow; step: StepRow; maxPasses: number },
): Promise<void> {
  const { step } = at;
  if (step.pr_number === null) return;
  const view = await startingPassView(deps.store, { ...at, secrets: deps.heldSecrets });
  const marker = passMarker(at.run.id, at.pass.number, step.id);
  await ensureComment(gh, { owner: step.owner, repo: step.repo }, step.pr_number, marker, renderReviewPackage(view));
}
