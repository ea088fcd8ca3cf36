// Over 250 lines: the final report, its withdrawal and the merges on acceptance follow one accepted run.
import type { LisaConfig } from "../config/config-schema.ts";
import type { CoreDeps } from "../deps.ts";
import type { GitHubReader } from "../github/github-port.ts";
import { type ReportView, renderFinalReport, renderWithdrawnReport, reportMarker } from "../reporting/final-report.ts";
import type { RunRow, Store } from "../store/store.ts";
import { PASS_OUTCOME } from "../store/transitions.ts";
import { composeStepPullRequest } from "./compose-step-pr.ts";
import { commentOnce, ensureComment } from "./ensure-comment.ts";
import { guidanceView } from "./guidance-view.ts";
import { ensureDraft, ensurePullRequestText, mergePullRequest } from "./pull-requests.ts";

/** Who accepted the run and how, as the store has it. */
interface Decision {
  by: string;
  via: "approval" | "override" | "merge";
}

/**
 * The decision the final report names: the accepted pass's (recorded with the run's acceptance in
 * one transaction), also when Lisa then merged (`on_accept: merge`); for a run whose pull requests
 * people merged without accepting it, whoever merged them.
 */
async function decisionOf(store: Store, runId: number): Promise<Decision | undefined> {
  const run = await store.runs.get(runId);
  if (!run) return undefined;
  const pass = (await store.passes.of(runId)).findLast((p) => p.decision === "accept");
  if (pass || run.state !== "merged")
    return { by: pass?.decided_by ?? run.requested_by, via: pass?.decided_via === "/lisa accept" ? "override" : "approval" };
  const merge = (await store.events.of(runId)).findLast((event) => event.kind === "merge");
  return { by: merge?.actor ?? run.requested_by, via: "merge" };
}

/**
 * The final report on the issue, written or brought up to date. It looks before it
 * creates: a stop between creating it and recording its id leaves one report, found by its marker.
 */
export async function publishFinalReport(deps: CoreDeps, gh: GitHubReader, runId: number, config: LisaConfig): Promise<void> {
  const { store } = deps;
  const run = await store.runs.get(runId);
  const decision = await decisionOf(store, runId);
  if (!run || !decision) return;
  const ref = { owner: run.owner, repo: run.repo };
  const body = renderFinalReport(await reportView(store, runId, decision, deps.heldSecrets, config));
  const id = await ensureComment(gh, ref, run.issue_number, reportMarker(runId), body, run.report_comment_id);
  if (id !== run.report_comment_id) await store.runs.recordReportComment(runId, id);
}

/**
 * An acceptance withdrawn (docs/operations.md): the report says it no longer stands, and the PR bodies no
 * longer say "Accepted". Each part reads GitHub before it writes.
 */
export async function publishWithdrawal(deps: CoreDeps, gh: GitHubReader, runId: number): Promise<void> {
  const { store } = deps;
  const run = await store.runs.get(runId);
  if (!run || run.report_comment_id === null) return;
  // Only for the state change that took the acceptance back: a later pass's gate finds it said.
  const change = (await store.events.of(runId)).findLast((event) => event.to_state !== null);
  if (change?.kind !== "withdraw" && change?.kind !== "reopen") return;
  const reason = change.kind === "withdraw" && change.actor && change.detail ? `@${change.actor} ${change.detail}` : undefined;
  const body = renderWithdrawnReport({ runId, ...(reason ? { reason } : {}), secrets: deps.heldSecrets });
  const ref = { owner: run.owner, repo: run.repo };
  await ensureComment(gh, ref, run.issue_number, reportMarker(runId), body, run.report_comment_id);
  await writePullRequestBodies(deps, gh, run);
}

/** Each open PR's body as the store has the run now (an accepted run's says so). */
async function writePullRequestBodies(deps: CoreDeps, gh: GitHubReader, run: RunRow): Promise<void> {
  const context = { run, deps, pass: { number: run.current_pass }, secrets: deps.heldSecrets };
  for (const step of await deps.store.steps.of(run.id)) {
    if (step.pr_number === null || step.pr_state !== "open") continue;
    const ref = { owner: step.owner, repo: step.repo };
    const pr = await gh.getPullRequest(ref, step.pr_number);
    const body = (await composeStepPullRequest(context, step)).mergeInto(pr.body);
    await ensurePullRequestText(gh, ref, pr, { body });
  }
}

/**
 * What accepting does to the pull requests: drafts marked ready, bodies that say so and, with
 * `review.on_accept: merge`, the approved heads merged in plan order. Each part reads GitHub before it acts, so it
 * can run again after a stop.
 */
export async function publishAcceptance(deps: CoreDeps, gh: GitHubReader, runId: number, config: LisaConfig): Promise<void> {
  const { store } = deps;
  const run = await store.runs.get(runId);
  if (!run) return;
  for (const step of await store.steps.of(runId)) {
    if (step.pr_number === null || step.pr_state !== "open" || !step.draft) continue;
    const pr = await gh.getPullRequest({ owner: step.owner, repo: step.repo }, step.pr_number);
    await ensureDraft(gh, pr, false);
    await store.steps.record(step.id, { draft: 0 });
  }
  // The bodies say the run was accepted, after how many passes.
  await writePullRequestBodies(deps, gh, run);
  if (config.review.on_accept === "merge") await mergeInPlanOrder(deps, gh, runId, config);
}

/**
 * Merges each open PR at the head that was approved, in plan order, and stops at GitHub's first
 * refusal: it is recorded (event `merge_refused`) and told once on the issue, with what a person
 * can do, and that head is never sent to GitHub again; a new approved head is tried afresh.
 */
async function mergeInPlanOrder(deps: CoreDeps, gh: GitHubReader, runId: number, config: LisaConfig): Promise<void> {
  const { store } = deps;
  const run = await store.runs.get(runId);
  if (!run) return;
  const refused = new Set(
    (await store.events.of(runId)).filter((e) => e.kind === "merge_refused").map((e) => refusedHead(e.detail)),
  );
  for (const step of await store.steps.of(runId)) {
    if (step.pr_number === null || step.pr_state !== "open" || !step.head_sha) continue;
    const ref = { owner: step.owner, repo: step.repo };
    const pr = `${step.owner}/${step.repo}#${step.pr_number}`;
    // Refused at this head already: asking again gets the same answer, and people were told.
    if (refused.has(`${pr}@${step.head_sha}`)) return;
    // Merged already: by a Lisa that stopped before recording it, or by a person.
    const merged = (await gh.getPullRequest(ref, step.pr_number)).merged;
    const method = config.review.merge_method ?? (await gh.mergeMethods(ref))[0] ?? "merge";
    // Only the approved SHA: if the head moved since, GitHub refuses with 409 and Lisa stops.
    const result = merged ? { merged, message: "" } : await mergePullRequest(gh, ref, step.pr_number, step.head_sha, method);
    if (!result.merged) {
      await store.events.add(runId, "merge_refused", { note: `${pr}@${step.head_sha} ${result.status} ${result.message}` });
      const marker = `<!-- lisa:merge-refused run=${runId} pr=${pr}@${step.head_sha} -->`;
      await commentOnce(gh, { owner: run.owner, repo: run.repo }, run.issue_number, marker, mergeRefusal(pr, method, result));
      return;
    }
    await store.steps.record(step.id, { pr_state: "merged" });
    await store.events.add(runId, "merged_by_lisa", {
      note: `${step.owner}/${step.repo}#${step.pr_number}@${step.head_sha.slice(0, 7)}`,
    });
  }
}

/** `owner/repo#n@sha` of a `merge_refused` event's detail. */
export const refusedHead = (detail: string | null): string => (detail ?? "").split(" ")[0] ?? "";

/** What GitHub's refusal of a merge means, and what a person can do about it. */
export function mergeRefusal(pr: string, method: string, refusal: { status: number; message: string }): string {
  const said = refusal.message.replace(/\s+/g, " ").trim();
  const advice =
    refusal.status === 409
      ? "The pull request's head moved after it was approved: review the new head; approving it accepts the run again."
      : refusal.status === 403
        ? /workflow/i.test(said)
          ? "Lisa's App has no `workflows` permission, so GitHub does not let it merge a change to `.github/workflows/`: a person with write access merges it."
          : "Lisa's App lacks a permission this merge needs: a person with write access merges it, or an owner grants the permission."
        : /not allowed/i.test(said)
          ? `The repository does not allow a ${method} merge: set \`review.merge_method\` in \`.github/lisa.yml\` to one it allows, or merge it yourself.`
          : /status check|approving review|rule/i.test(said)
            ? "The base branch's rules ask for more than Lisa's gate did: merge it yourself once they are met."
            : "Merge it yourself once GitHub allows it.";
  return [
    `Lisa did not merge ${pr}: GitHub refused (${refusal.status}): "${said}"`,
    "",
    advice,
    "",
    "Lisa will not try this merge again. The pull requests after it in the plan were not merged either; the run ends merged once people have merged them.",
  ].join("\n");
}

async function reportView(
  store: Store,
  runId: number,
  decision: Decision,
  secrets: readonly string[],
  config: LisaConfig,
): Promise<ReportView> {
  const run = await store.runs.get(runId);
  if (!run) throw new Error(`run ${runId} does not exist`);
  const steps = (await store.steps.of(runId)).filter((s) => s.position > 0);
  const gates = new Map(steps.map((s) => [s.id, s.gate ?? undefined]));
  const sessions = (await Promise.all(steps.map((s) => store.sessions.of(s.id)))).flat();
  const passRows = await store.passes.of(runId);
  const passes = await Promise.all(
    passRows.map(async (pass) => {
      const records = await store.steps.allInPass(pass.id);
      const changes = await Promise.all(
        records.map(async (record) => {
          const step = await store.steps.get(record.step_id);
          const files = record.changed_files ?? [];
          return {
            repo: `${step.owner}/${step.repo}`,
            commits: record.commits,
            added: files.reduce((sum, f) => sum + f.added, 0),
            deleted: files.reduce((sum, f) => sum + f.deleted, 0),
            outcome: record.state,
          };
        }),
      );
      return {
        pass: pass.number,
        trigger: pass.trigger,
        by: pass.requested_by,
        guidance: (await store.guidance.forPass(pass.id)).map(guidanceView),
        changes,
        // Each pass's gates, named by repository where the pass worked in more than one.
        gates: (
          await Promise.all(
            records.map(async (r) => {
              const gates = r.gates ?? [];
              if (records.length < 2) return gates;
              const step = await store.steps.get(r.step_id);
              return gates.map((gate) => ({ ...gate, repo: `${step.owner}/${step.repo}` }));
            }),
          )
        ).flat(),
        costUsd: await store.runs.cost(runId, pass.number),
        outcome: PASS_OUTCOME[pass.state],
      };
    }),
  );
  const histories = await Promise.all(steps.map(async (s) => ({ s, history: await store.steps.history(s.id) })));
  // A PR's gates are those Lisa ran at its accepted head, whatever became of that pass (one blocked
  // on red CI and skipped ran them all the same); a later pass that left it unchanged carries them
  // over, and did not run them.
  const verified = new Map(
    histories.map(({ s, history }) => {
      const ran = history.filter((r) => r.gates !== null);
      // A pass blocked on the PR's own CI pushed that head (its wip_sha) before CI failed there.
      const record =
        ran.findLast((r) => (r.end_sha ?? r.wip_sha) === s.head_sha) ?? ran.filter((r) => r.state === "delivered").at(-1);
      return [s.id, record ? { gates: record.gates ?? [], gatesPass: record.number } : undefined];
    }),
  );
  const issueRef = `#${run.issue_number}`;
  return {
    runId,
    issueRef,
    issueTitle: run.issue_title,
    problem: run.issue_body,
    accepted: {
      via: decision.via,
      by: decision.by,
      prs: steps
        .filter((s) => s.pr_number !== null && s.pr_url !== null)
        .map((s) => ({
          repo: `${s.owner}/${s.repo}`,
          number: s.pr_number ?? 0,
          url: s.pr_url ?? "",
          sha: s.head_sha,
          approvers: gates.get(s.id)?.approvers ?? [],
          status: gates.get(s.id)?.status ?? "pending",
          ...verified.get(s.id),
        })),
    },
    plan: steps.map((s) => ({
      repo: `${s.owner}/${s.repo}`,
      ...(s.scope ? { scope: s.scope } : {}),
      ...(s.pr_url ? { prUrl: s.pr_url } : {}),
    })),
    passes,
    humanCommits: histories.flatMap(({ s, history }) =>
      history.flatMap((r) => r.human_shas ?? []).map((c) => ({ ...c, human: true, repo: `${s.owner}/${s.repo}` })),
    ),
    skipped: steps
      .filter((s) => s.state === "skipped" || s.state === "blocked" || s.state === "dropped")
      .map((s) => ({ repo: `${s.owner}/${s.repo}`, reason: s.state })),
    openQuestions: passRows.flatMap((p) => p.open_questions ?? []),
    memoryPulls: (await store.learnings.memoryPulls(runId)).map((pull) => ({
      repo: `${pull.owner}/${pull.repo}`,
      number: pull.pr_number,
      url: pull.pr_url,
      file: config.memory.file,
    })),
    totals: {
      sessions: sessions.length,
      durationMs: sessions.reduce((sum, s) => sum + ((s.finished_at ?? s.started_at) - s.started_at), 0),
      costUsd: await store.runs.cost(runId),
      limitUsd: config.limits.max_cost_usd,
    },
    secrets,
  };
}
