import type { CoreDeps } from "../deps.ts";
import { composePrTitle } from "../markdown/compose-pr-title.ts";
import { mergePrBody, type PassRowView, renderPrBodySection } from "../reporting/pr-body.ts";
import type { RunRow, StepRow } from "../store/store.ts";
import { issueRefFor } from "./issue-ref.ts";

/** What a pull request's text is composed from: the run, its current pass, and the secrets to keep out. */
export interface PullRequestContext {
  run: RunRow;
  deps: CoreDeps;
  pass: { number: number };
  secrets: readonly string[];
}

/**
 * Title and Lisa's section of a step's pull request body, from what the store kept of it, its
 * passes and its sibling steps. `mergeInto` puts the section into the body as it is on GitHub,
 * keeping what people wrote outside Lisa's markers. `delivered` writes the step's running pass as
 * it will read once the step is delivered, for a PR written just before its gate opens. An
 * accepted run's PRs say after how many passes, and its accepted pass reads "accepted".
 */
export async function composeStepPullRequest(
  ctx: PullRequestContext,
  step: StepRow,
  options: { delivered?: boolean } = {},
): Promise<{ title: string; mergeInto(existing: string | null): string }> {
  const { run, deps } = ctx;
  const { store } = deps;
  const manifest = step.manifest ?? undefined;
  const planned = (await store.steps.of(run.id)).filter((s) => s.position > 0);
  const sessions = await store.sessions.of(step.id);
  const passRows = await store.passes.of(run.id);
  const sameRepo = (g: { owner: string | null; repo: string | null }) =>
    g.owner === null || (g.owner.toLowerCase() === step.owner.toLowerCase() && g.repo?.toLowerCase() === step.repo.toLowerCase());
  // What reviewers asked of each pass, said on the issue or on this repository's pull request.
  const guidanceOf = new Map(
    await Promise.all(
      passRows.map(async (p) => [p.number, (await store.guidance.forPass(p.id)).filter(sameRepo).map((g) => g.body)] as const),
    ),
  );
  const passes: PassRowView[] = (await store.steps.history(step.id)).map((record) => {
    const pass = passRows.find((p) => p.number === record.number);
    const guidance = guidanceOf.get(record.number) ?? [];
    const files = record.changed_files ?? [];
    // Delivering copies the step's gates into its record of the pass; until then they are the step's.
    const deliveredNow = options.delivered && record.number === ctx.pass.number;
    const gates = (deliveredNow ? step.gates : record.gates) ?? [];
    return {
      pass: record.number,
      startedBy: `${pass?.trigger === "initial" ? "label" : (pass?.trigger ?? "pass")} by @${pass?.requested_by ?? run.requested_by}`,
      ...(guidance.length > 0 ? { guidanceExcerpt: guidance.join(" · ") } : {}),
      commits: record.commits,
      added: files.reduce((sum, f) => sum + f.added, 0),
      deleted: files.reduce((sum, f) => sum + f.deleted, 0),
      gates: gates.length === 0 ? "none" : gates.every((g) => g.passed) ? "green" : "red",
      costUsd: sessions.filter((s) => s.pass === record.number).reduce((sum, s) => sum + s.cost_usd, 0),
      outcome:
        pass?.state === "accepted" && record.state === "delivered"
          ? "accepted"
          : record.state !== "pending" && record.state !== "running"
            ? (record.state as PassRowView["outcome"])
            : deliveredNow
              ? "delivered"
              : "working",
    };
  });
  const section = renderPrBodySection({
    issueRef: issueRefFor(run, step),
    issueTitle: run.issue_title,
    ...(manifest ? { manifest } : {}),
    agentSummary: step.summary ?? "",
    files: step.changed_files ?? [],
    gates: step.gates ?? [],
    passes,
    ...(planned.length > 1
      ? {
          related: {
            position: step.position,
            of: planned.length,
            siblings: planned.map((s) => ({
              position: s.position,
              repo: `${s.owner}/${s.repo}`,
              url: s.pr_url,
              ...(s.gate ? { status: s.gate.status } : {}),
            })),
          },
        }
      : {}),
    // A plan's pull requests are each part of the issue: merging one first must not close it. Lisa
    // closes it once the last has merged (publishRunState).
    closing: planned.length > 1 ? "part_of" : "closes",
    ...(step.draft === 0 && step.state === "running" && !options.delivered ? { inProgress: ctx.pass.number } : {}),
    // Accepted: said at the top, until a withdrawn approval takes the run back to review.
    ...(run.state === "accepted" || run.state === "merged" ? { acceptedAfter: run.current_pass } : {}),
    secrets: ctx.secrets,
  });
  return {
    title: composePrTitle({ title: run.issue_title }, manifest, ctx.secrets),
    mergeInto: (existing) => mergePrBody(existing, section),
  };
}
