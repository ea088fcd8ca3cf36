import type { GitHubReader } from "../github/github-port.ts";
import { passMarker } from "../reporting/review-package.ts";
import type { PassRow, RunRow, StepRow, Store } from "../store/store.ts";
import { ensureComment, replyInThread } from "./ensure-comment.ts";
import { guidanceHere } from "./pass-comment.ts";

// A pass's review package on a step's pull request, and the replies in the threads whose comments
// guided the pass: what each says comes from the workflow's view and the store; whether and where to
// write it, and what is already there after a crash, is decided here.

/** Where a pass's package and replies go. */
export interface PackageContext {
  deps: { store: Store };
  gh: GitHubReader;
  run: Pick<RunRow, "id">;
  pass: Pick<PassRow, "id" | "number">;
}

/**
 * The package comment of this pass on the step's pull request shows `body`: made when the pass
 * starts on the PR, found again by its marker after a crash, and edited as the pass goes on; its id
 * is kept on the step's record for the pass.
 */
export async function publishPackage(ctx: PackageContext, step: StepRow, body: string): Promise<void> {
  const { store } = ctx.deps;
  const record = await store.steps.inPass(step.id, ctx.pass.id);
  if (step.pr_number === null || !record) return;
  const ref = { owner: step.owner, repo: step.repo };
  const marker = passMarker(ctx.run.id, ctx.pass.number, step.id);
  const id = await ensureComment(ctx.gh, ref, step.pr_number, marker, body, record.package_comment_id);
  if (id !== record.package_comment_id) await store.steps.recordInPass(record.id, { package_comment_id: id });
}

/**
 * Each inline comment that guided the pass gets one answer in its thread, with what the agent said
 * of it (its manifest numbers the pass's guidance `g1`, `g2`, … as the prompt did); a hidden marker
 * finds the answer again after a crash, so it is never posted twice.
 */
export async function publishThreadReplies(ctx: PackageContext, stepId: number): Promise<void> {
  const { store } = ctx.deps;
  const step = await store.steps.get(stepId);
  if (step.pr_number === null) return;
  const ref = { owner: step.owner, repo: step.repo };
  const threads = (await guidanceHere(store, ctx.pass.id, step)).filter((g) => g.github_id !== null && !g.replied);
  if (threads.length === 0) return;
  const existing = await ctx.gh.listPullComments(ref, step.pr_number);
  const numbered = await store.guidance.forPass(ctx.pass.id);
  for (const item of threads) {
    const said = step.manifest?.guidance?.find((g) => g.id === `g${numbered.findIndex((g) => g.id === item.id) + 1}`);
    const marker = `<!-- lisa:thread guidance=${item.id} -->`;
    // GitHub takes replies to a thread's first comment only, and files them under it.
    const commented = existing.find((c) => c.id === item.github_id);
    const thread = commented?.inReplyTo ?? item.github_id ?? 0;
    if (!existing.some((c) => c.body.includes(marker))) {
      const status = said ? said.status.replace(/_/g, " ") : "worked on";
      const note = said?.note ? `: ${said.note.replace(/\s+/g, " ").slice(0, 500)}` : "";
      const head = step.head_sha?.slice(0, 7) ?? "the new head";
      await replyInThread(
        ctx.gh,
        ref,
        step.pr_number,
        thread,
        `${marker}\nPass ${ctx.pass.number}: ${status}${note} (at \`${head}\`).`,
      );
    }
    await store.guidance.markReplied(item.id);
  }
}
