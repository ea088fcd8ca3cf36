import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { StepError } from "../errors.ts";
import { parseRepoRef, type RepoRef } from "../github/github-port.ts";
import { isWriter } from "../github/permissions.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import type { AgentResult } from "../providers/provider.ts";
import { commentOnce } from "../publication/ensure-comment.ts";
import { cleanLine } from "../reporting/untrusted.ts";
import { deliverPlan, startStep } from "../store/step-changes.ts";
import { fenceAsData, renderPrompt } from "../workflow/context/render-prompt.ts";
import { freshToken, type RunContext, refusedMove } from "../workflow/context/run-context.ts";
import { sessionFailure } from "../workflow/context/session-failure.ts";
import { branchName } from "../workspace/branch-name.ts";
import { checkoutDetached } from "../workspace/create-worktree.ts";
import { git } from "../workspace/git.ts";
import { removeWorktree } from "../workspace/remove-worktree.ts";
import { syncMirror } from "../workspace/sync-mirror.ts";
import { mirrorPath, worktreesRoot } from "../workspace/workspace-paths.ts";
import type { Plan } from "./plan-schema.ts";
import { readPlan } from "./validate-plan.ts";

/** Planning attempts before the run fails: the first, then two with a stronger prompt. */
export const PLAN_ATTEMPTS = 3;

/**
 * Runs one planning session in `cwd` with the given prompt, as session number `iteration`; the
 * sandbox shows it `mirrors` read-only (the repositories it may plan, and no other).
 */
export type InvokePlanner = (iteration: number, prompt: string, cwd: string, mirrors: string[]) => Promise<AgentResult>;

/**
 * The planning phase of a multi-repository run: checks out every configured repository read-only
 * in one workspace, asks the agent for `.lisa-plan.json`, validates it, and asks again with the
 * problems listed when it is invalid. A valid plan becomes the run's steps.
 */
export async function planRun(ctx: RunContext, stepId: number, invoke: InvokePlanner): Promise<void> {
  const { deps, gh, run, config } = ctx;
  const { store } = deps;
  // The planner reads only repositories the person who asked for this pass may write to.
  const repos: typeof config.repos & {} = [];
  const refused: string[] = [];
  for (const entry of config.repos ?? []) {
    if (await isWriter(gh, parseRepoRef(entry.repo), ctx.pass.requested_by)) repos.push(entry);
    else refused.push(entry.repo);
  }
  if (refused.length > 0) {
    await store.events.add(run.id, "repos_refused", { actor: ctx.pass.requested_by, note: refused.join(", ") });
    deps.log.warn({ runId: run.id, refused }, "repositories left out: the requester cannot write to them");
  }
  if (repos.length === 0) {
    throw new StepError(
      `@${ctx.pass.requested_by} has write access to none of the repositories in \`repos\`, so Lisa plans nothing.`,
    );
  }
  const workspace = path.join(worktreesRoot(deps.workspace), `run-${run.id}-plan`);
  if (!(await startStep(store, stepId, { worktree: workspace }))) await refusedMove(ctx, "planning step start");
  ctx.publish();

  const checkouts: { ref: RepoRef; path: string }[] = [];
  const overviews: string[] = [];
  for (const { repo: fullName, description } of repos) {
    const ref = parseRepoRef(fullName);
    await syncMirror(deps.workspace, ref, await freshToken(ctx));
    const base = config.base_branch ?? (await gh.defaultBranch(ref));
    const dir = path.join(workspace, ref.owner, ref.repo);
    await checkoutDetached(deps.workspace, ref, { base, path: dir });
    checkouts.push({ ref, path: dir });
    overviews.push(await describeRepository(fullName, description, dir, base));
  }

  const names = repos.map((r) => r.repo);
  let problems: string[] = [];
  const firstIteration = (await store.steps.get(stepId)).iteration_base + 1;
  for (let attempt = 1; attempt <= PLAN_ATTEMPTS; attempt++) {
    const prompt = await renderPrompt(deps.promptsDir, "plan", {
      issue_number: String(run.issue_number),
      issue_repo: `${run.owner}/${run.repo}`,
      // A secret someone pasted into the issue goes no further: not to the model vendor, not into a plan.
      issue_title: redactSecrets(run.issue_title.replace(/\s+/g, " "), ctx.secrets),
      issue: fenceAsData(
        `the body of issue #${run.issue_number}, written on GitHub`,
        redactSecrets(run.issue_body || "(no description)", ctx.secrets),
      ),
      retry: retryHeader(attempt, problems),
      repos: overviews.join("\n\n"),
      repo_names: names.map((n) => `\`${n}\``).join(", "),
      revision: [
        refused.length
          ? `These configured repositories are left out because @${ctx.pass.requested_by} cannot write to them: ${refused.map((r) => `\`${r}\``).join(", ")}.`
          : "",
        await revisionSection(ctx),
      ]
        .filter(Boolean)
        .join("\n\n"),
    });
    const mirrors = checkouts.map((checkout) => mirrorPath(deps.workspace, checkout.ref));
    const result = await invoke(firstIteration + attempt - 1, prompt, workspace, mirrors);
    if (!result.ok) throw new StepError(sessionFailure("The planning session", result.failure, ctx.secrets));
    const check = await readPlan(workspace, names);
    if (check.ok) {
      const steps = [...check.plan.steps]
        .sort((a, b) => a.order - b.order)
        .map((step, i) => {
          const target = parseRepoRef(step.repo);
          return {
            position: i + 1,
            ...target,
            branch: branchName(run.issue_number, run.issue_title, run, target),
            baseBranch: config.base_branch ?? null,
            scope: step.scope,
          };
        });
      await store.passes.recordPlan(run.id, ctx.pass.number, check.plan, steps);
      await reportOutOfScope(ctx, check.plan.out_of_scope ?? []);
      const summary = check.plan.rationale ?? null;
      if (!(await deliverPlan(store, stepId, summary))) await refusedMove(ctx, "planning step deliver");
      for (const checkout of checkouts) await removeWorktree(deps.workspace, checkout.ref, { path: checkout.path });
      await rm(workspace, { recursive: true, force: true });
      ctx.publish();
      return;
    }
    problems = check.problems;
    deps.log.warn({ runId: run.id, attempt, problems }, "invalid plan");
  }
  throw new StepError(
    `The planner did not write a valid plan in ${PLAN_ATTEMPTS} attempts. What was wrong the last time:\n${problems.map((p) => `- ${p}`).join("\n")}`,
  );
}

/** The stronger prompt of later attempts: what was wrong, and that this must be fixed. */
function retryHeader(attempt: number, problems: readonly string[]): string {
  if (attempt === 1) return "";
  const label = attempt === PLAN_ATTEMPTS ? "[FINAL ATTEMPT]" : "[RETRY - YOUR PLAN WAS REJECTED]";
  return [
    `${label} Your previous \`.lisa-plan.json\` was rejected. Fix every one of these problems and write the file again:`,
    ...problems.map((p) => `- ${p}`),
  ].join("\n");
}

/** A short overview for the planner: the description, the top-level tree and the head of the README. */
async function describeRepository(fullName: string, description: string, dir: string, base: string): Promise<string> {
  const tree = (await git(dir, ["ls-tree", "--name-only", "HEAD"])).trim().split("\n").slice(0, 60);
  const readmeName = ["README.md", "README", "readme.md", "README.rst"].find((name) => existsSync(path.join(dir, name)));
  const readme = readmeName ? (await readFile(path.join(dir, readmeName), "utf8")).split("\n").slice(0, 30).join("\n") : "";
  return [
    `### \`${fullName}\` (checked out at \`${path.basename(path.dirname(dir))}/${path.basename(dir)}/\`, branch \`${base}\`)`,
    description ? `Description from the configuration: ${description}` : "",
    `Top level: ${tree.map((t) => `\`${t}\``).join(", ")}`,
    readme ? fenceAsData(`the start of ${fullName}'s README`, readme) : "",
  ]
    .filter(Boolean)
    .join("\n\n");
}

/**
 * For pass N ≥ 2: the previous plan, each pull request's state and the guidance, so the planner
 * decides which repositories this pass changes. Repositories it leaves out keep their PRs as they are.
 */
async function revisionSection(ctx: RunContext): Promise<string> {
  const { store } = ctx.deps;
  const given = await store.guidance.forPass(ctx.pass.id);
  if (ctx.pass.number === 1) {
    // Guidance given while the first plan was being made: the plan must follow it.
    if (given.length === 0) return "";
    const lines = given.map((g, i) => `g${i + 1} from ${g.author}: ${g.body.replace(/\s+/g, " ").slice(0, 1_000)}`);
    return [
      "## Guidance given while you planned",
      "",
      fenceAsData("the maintainers' guidance for this plan", lines.join("\n")),
    ].join("\n");
  }
  const steps = (await store.steps.of(ctx.run.id)).filter((s) => s.position > 0);
  const states = steps.map((s) => {
    const gate = s.gate?.status ?? "pending";
    const fixed =
      s.pr_state === "closed"
        ? " (closed by a human: do not change this repository)"
        : s.pr_state === "merged"
          ? " (merged: a change here becomes a follow-up pull request)"
          : "";
    return `- \`${s.owner}/${s.repo}\`: pull request ${s.pr_url ?? "(none)"}, review status ${gate}${fixed}. Scope so far: ${(s.scope ?? "").replace(/\s+/g, " ").slice(0, 300)}`;
  });
  const guidance = given.map((g, i) => {
    const where = g.owner ? ` on ${g.owner}/${g.repo}#${g.pr_number}` : " on the issue";
    return `g${i + 1} from ${g.author}${where}: ${g.body.replace(/\s+/g, " ").slice(0, 1_000)}`;
  });
  return [
    `## This is pass ${ctx.pass.number}: reviewers asked for changes`,
    "",
    "The earlier passes delivered these pull requests:",
    ...states,
    "",
    fenceAsData("the reviewers' guidance for this pass", guidance.join("\n") || "(none)"),
    "",
    "Plan only the repositories that must change for this guidance (a repository left out keeps its pull request and its approval). The scope of each step says what to change in this pass.",
  ].join("\n");
}

/**
 * Tells the issue what the planner could not plan (E10): a repository missing from `repos` needs a
 * config change, not another try. Posted once per pass, found again by its marker after a crash.
 */
async function reportOutOfScope(ctx: RunContext, items: NonNullable<Plan["out_of_scope"]>): Promise<void> {
  if (items.length === 0) return;
  const { gh, run, pass } = ctx;
  const ref = { owner: run.owner, repo: run.repo };
  const marker = `<!-- lisa:out-of-scope run=${run.id} pass=${pass.number} -->`;
  const lines = items.map(
    (item) =>
      `- ${cleanLine(item.request, { secrets: ctx.secrets, max: 300 })}: ${cleanLine(item.reason, { secrets: ctx.secrets, max: 300 })}`,
  );
  await commentOnce(
    gh,
    ref,
    run.issue_number,
    marker,
    [
      `Lisa left these requests out of pass ${pass.number}:`,
      "",
      ...lines,
      "",
      `A repository that is not listed under \`repos\` in \`.github/lisa.yml\` cannot be planned: add it there (and install Lisa on it), then \`/lisa redirect\` again. The other repositories go on as planned.`,
    ].join("\n"),
  );
}
