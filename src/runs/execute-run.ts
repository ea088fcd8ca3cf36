import { existsSync } from "node:fs";
import type { LisaConfig } from "../config/config-schema.ts";
import { parseConfig } from "../config/parse-config.ts";
import { ConfigError, GitError, StepError } from "../errors.ts";
import { type GitHubPort, parseRepoRef, type RepoRef } from "../github/github-port.ts";
import { renderTrackingComment, trackingMarker } from "../github/tracking-comment.ts";
import { composePrBody, composePrTitle, type GateOutcome } from "../markdown/compose-pr-body.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { planRun } from "../planner/plan-run.ts";
import { buildAgentEnv } from "../providers/agent-env.ts";
import { installedVersion, isAtLeast } from "../providers/installed-version.ts";
import { type AgentResult, type Provider, TRANSIENT_FAILURES } from "../providers/provider.ts";
import { providers } from "../providers/registry.ts";
import { runAgent } from "../providers/run-agent.ts";
import type { SandboxScope } from "../sandbox/sandbox-settings.ts";
import { assertWorktreeOf } from "../workspace/git.ts";
import {
  createWorktree,
  findWorktreeByBranch,
  mirrorPath,
  pushBranch,
  removeWorktree,
  syncMirror,
  type Worktree,
} from "../workspace/workspace.ts";
import { changedFiles, commitPending, commitsSince } from "./commit-changes.ts";
import type { CoreDeps } from "./deps.ts";
import { type Manifest, manifestSchema, takeManifest } from "./read-manifest.ts";
import { fenceAsData, renderPrompt } from "./render-prompt.ts";
import { type GateResult, runGates } from "./run-gates.ts";
import type { RunRow, SessionRow, StepRow } from "./store.ts";

/** The issue labels that show a run's state; exactly one is on the issue at a time. */
export const STATE_LABELS = { running: "lisa:working", review: "lisa:review", failed: "lisa:failed" } as const;

export interface RunContext {
  deps: CoreDeps;
  gh: GitHubPort;
  run: RunRow;
  config: LisaConfig;
  /** Values to redact from everything Lisa writes. */
  secrets: string[];
  publish(): Promise<void>;
}

/**
 * Executes a run from wherever it stands: each step is taken from its recorded phase, and every
 * side effect looks before it creates, so a run interrupted at any point resumes without duplicates.
 */
export async function executeRun(deps: CoreDeps, runId: number): Promise<void> {
  const run = deps.store.run(runId);
  if (!run) throw new Error(`run ${runId} does not exist`);
  const gh = await deps.github(run.installation_id);
  const ctx: RunContext = {
    deps,
    gh,
    run,
    config: parseConfig(JSON.parse(run.config)),
    secrets: [],
    publish: () => publishTracking(deps, gh, runId),
  };
  const issueRef = { owner: run.owner, repo: run.repo };
  await setStateLabel(gh, issueRef, run.issue_number, "running");
  await ctx.publish();
  try {
    const planning = deps.store.steps(runId).find((step) => step.position === 0);
    if (planning && planning.state !== "delivered") {
      await planRun(ctx, planning.id, (iteration, prompt, cwd) =>
        invokeAgent(ctx, planning.id, iteration, "plan", prompt, {
          ref: { owner: run.owner, repo: run.repo },
          host: { path: cwd, branch: "", startSha: "", reused: true },
          native: undefined,
          nativePath: undefined,
          // The planner reads every configured repository and changes none.
          scope: { readOnly: (ctx.config.repos ?? []).map((r) => mirrorPath(deps.workspace, parseRepoRef(r.repo))) },
        }),
      );
    }
    // Steps are read again: planning has just added them.
    for (const step of deps.store.steps(runId)) {
      if (step.position === 0 || step.state === "delivered") continue;
      await executeStep(ctx, step.id);
      await linkSiblingPullRequests(ctx, step.id);
    }
    deps.store.updateRun(runId, { state: "review", finished_at: deps.now() });
    await setStateLabel(gh, issueRef, run.issue_number, "review");
  } catch (error) {
    const steps = deps.store.steps(runId);
    const failed = steps.find((step) => step.state === "running");
    const detail = explain(error, ctx.secrets);
    // In a plan, say which step failed: the ones after it did not run.
    const message =
      failed && (failed.position === 0 || steps.length > 1)
        ? `${failed.position === 0 ? "Planning" : `Step ${failed.position} (${failed.owner}/${failed.repo})`} failed: ${detail}`
        : detail;
    deps.log.error({ err: error, runId }, "run failed");
    if (failed) deps.store.updateStep(failed.id, { state: "failed", error: detail });
    deps.store.updateRun(runId, { state: "failed", error: message, finished_at: deps.now() });
    await setStateLabel(gh, issueRef, run.issue_number, "failed").catch((e) => deps.log.warn({ err: e }, "could not set label"));
  } finally {
    await ctx.publish();
  }
}

/** The sentence a human reads on the issue: ours verbatim, anything unexpected marked as such. */
function explain(error: unknown, secrets: readonly string[]): string {
  const known = error instanceof StepError || error instanceof GitError || error instanceof ConfigError;
  const text = error instanceof Error ? error.message : String(error);
  return redactSecrets(known ? text : `Lisa hit an unexpected error: ${text}`, secrets);
}

async function setStateLabel(gh: GitHubPort, ref: RepoRef, issue: number, state: keyof typeof STATE_LABELS): Promise<void> {
  await gh.addLabels(ref, issue, [STATE_LABELS[state]]);
  for (const [other, label] of Object.entries(STATE_LABELS)) {
    if (other !== state) await gh.removeLabel(ref, issue, label);
  }
}

/** Creates or edits the run's tracking comment; a failure to publish is logged, never fatal to the run. */
async function publishTracking(deps: CoreDeps, gh: GitHubPort, runId: number): Promise<void> {
  const run = deps.store.run(runId);
  if (!run) return;
  const body = renderTrackingComment({
    run,
    steps: deps.store.steps(runId).map((step) => ({ step, sessions: deps.store.sessions(step.id) })),
    costUsd: deps.store.runCost(runId),
    now: deps.now(),
  });
  const ref = { owner: run.owner, repo: run.repo };
  try {
    if (run.comment_id !== null) return await gh.updateComment(ref, run.comment_id, body);
    // Look before creating: a crash may have come between creating the comment and recording it.
    const found = await gh.findComment(ref, run.issue_number, trackingMarker(runId));
    if (found !== undefined) {
      deps.store.updateRun(runId, { comment_id: found });
      await gh.updateComment(ref, found, body);
    } else {
      deps.store.updateRun(runId, { comment_id: await gh.createComment(ref, run.issue_number, body) });
    }
  } catch (error) {
    deps.log.warn({ err: error, runId }, "could not update the tracking comment");
  }
}

async function executeStep(ctx: RunContext, stepId: number): Promise<void> {
  const { deps, gh, run } = ctx;
  const { store } = deps;
  let step = store.step(stepId);
  const ref = { owner: step.owner, repo: step.repo };
  const token = await gh.installationToken();
  ctx.secrets.push(token);
  store.updateStep(stepId, { state: "running" });
  await ctx.publish();

  await syncMirror(deps.workspace, ref, token);
  const base = step.base_branch ?? ctx.config.base_branch ?? (await gh.defaultBranch(ref));
  store.updateStep(stepId, { base_branch: base });
  const worktree = await createWorktree(deps.workspace, ref, {
    branch: step.branch,
    base,
    dir: `run-${run.id}-step-${step.position}`,
  });
  store.updateStep(stepId, { worktree: worktree.path, start_sha: step.start_sha ?? worktree.startSha });
  step = store.step(stepId);
  const baseRef = `refs/remotes/origin/${base}`;
  const checkout: Checkout = {
    ref,
    host: worktree,
    native: await chooseNativeWorktree(ctx, step),
    nativePath: step.native_worktree && existsSync(step.native_worktree) ? step.native_worktree : undefined,
    scope: { mirrors: [mirrorPath(deps.workspace, ref)] },
  };

  if (step.phase === "workspace" || step.phase === "agent" || step.phase === "gates") {
    await runAgentUntilGatesPass(ctx, step, checkout);
    store.updateStep(stepId, { phase: "commit" });
  }
  const dir = workDir(checkout);
  if (store.step(stepId).phase === "commit") {
    const taken = await takeManifest(dir);
    if (taken.manifest) store.updateStep(stepId, { manifest: JSON.stringify(taken.manifest) });
    if (!taken.manifest && taken.problem) deps.log.warn({ runId: run.id, problem: taken.problem }, "agent manifest ignored");
    const title = composePrTitle({ title: run.issue_title }, currentManifest(store.step(stepId)), ctx.secrets);
    await commitPending(dir, `${title}\n\nMade by Lisa for ${issueRefFor(run, store.step(stepId))}.`);
    if ((await commitsSince(dir, baseRef)) === 0) {
      throw new StepError(
        `The agent finished without changing anything in ${ref.owner}/${ref.repo}, so there is nothing to propose.`,
      );
    }
    store.updateStep(stepId, { phase: "push" });
    await ctx.publish();
  }
  if (store.step(stepId).phase === "push") {
    await pushBranch(deps.workspace, ref, { path: dir, branch: step.branch }, token);
    store.updateStep(stepId, { phase: "pull_request" });
    await ctx.publish();
  }
  if (store.step(stepId).phase === "pull_request") {
    store.updateStep(stepId, { changed_files: JSON.stringify(await changedFiles(dir, baseRef)) });
    const pr = composeStepPullRequest(ctx, store.step(stepId));
    // Look before creating: the PR may exist from before a crash or from an earlier run.
    const existing = await gh.findPullRequest(ref, step.branch);
    const opened = existing ?? (await gh.createPullRequest(ref, { ...pr, head: step.branch, base }));
    if (existing) await gh.updatePullRequest(ref, existing.number, pr);
    store.updateStep(stepId, { phase: "done", state: "delivered", pr_number: opened.number, pr_url: opened.url });
    await ctx.publish();
  }
  if (checkout.native && checkout.nativePath) {
    await removeWorktree(deps.workspace, ref, { path: checkout.nativePath, branch: checkout.native.branch });
  }
  await removeWorktree(deps.workspace, ref, worktree);
}

/** Where a step's work happens: Lisa's worktree, or the one a CLI made inside it with its own `--worktree`. */
interface Checkout {
  /** The repository the step works on. */
  ref: RepoRef;
  host: Worktree;
  native: { provider: Provider; name: string; branch: string } | undefined;
  /** Where the CLI put its worktree, once a session has made it. */
  nativePath: string | undefined;
  /** What the sandboxed agent and gates may reach besides their working directory. */
  scope: SandboxScope;
}

/** The directory holding the step's work: the CLI's native worktree once it exists, else Lisa's. */
function workDir(checkout: Checkout): string {
  return checkout.nativePath ?? checkout.host.path;
}

/**
 * Lets the CLI make the worktree when the preferred provider can, as told by its installed
 * version; the step then works in that worktree whichever provider runs.
 */
async function chooseNativeWorktree(ctx: RunContext, step: StepRow): Promise<Checkout["native"]> {
  const [first] = ctx.config.providers;
  const provider = first ? providers[first.name] : undefined;
  if (!first || !provider?.nativeWorktree) return undefined;
  // Work already done in Lisa's checkout (a fallback provider's, or before a restart) stays there.
  if (ctx.deps.store.sessions(step.id).length > 0 && !step.native_worktree) return undefined;
  const version = await installedVersion(ctx.deps.agentBinaries[first.name] ?? provider.defaultBinary);
  if (!version || !isAtLeast(version, provider.nativeWorktree.since)) return undefined;
  const name = `lisa-${ctx.run.id}-${step.position}`;
  return { provider, name, branch: provider.nativeWorktree.branch(name) };
}

/** How a step's commits and pull request name the issue: from another repository, only the full reference links. */
function issueRefFor(run: RunRow, step: StepRow): string {
  const sameRepo = step.owner.toLowerCase() === run.owner.toLowerCase() && step.repo.toLowerCase() === run.repo.toLowerCase();
  return sameRepo ? `#${run.issue_number}` : `${run.owner}/${run.repo}#${run.issue_number}`;
}

/** Title and body of a step's pull request, from what the store kept of it and of its sibling steps. */
function composeStepPullRequest(ctx: RunContext, step: StepRow): { title: string; body: string } {
  const { run } = ctx;
  const manifest = currentManifest(step);
  const planned = ctx.deps.store.steps(run.id).filter((s) => s.position > 0);
  return {
    title: composePrTitle({ title: run.issue_title }, manifest, ctx.secrets),
    body: composePrBody({
      issue: { number: run.issue_number, title: run.issue_title },
      issueRef: issueRefFor(run, step),
      manifest,
      agentSummary: step.summary ?? "",
      changedFiles: JSON.parse(step.changed_files ?? "[]") as { path: string; added: number; deleted: number }[],
      gates: JSON.parse(step.gates ?? "[]") as GateOutcome[],
      plan:
        planned.length > 1
          ? {
              position: step.position,
              steps: planned.map((s) => ({ position: s.position, repo: `${s.owner}/${s.repo}`, url: s.pr_url })),
            }
          : undefined,
      secrets: ctx.secrets,
    }),
  };
}

/** Once a step of a plan has opened its pull request, the earlier ones link to it too. */
async function linkSiblingPullRequests(ctx: RunContext, deliveredId: number): Promise<void> {
  const steps = ctx.deps.store.steps(ctx.run.id).filter((s) => s.position > 0);
  if (steps.length < 2) return;
  for (const step of steps) {
    if (step.id === deliveredId || step.pr_number === null) continue;
    await ctx.gh.updatePullRequest({ owner: step.owner, repo: step.repo }, step.pr_number, composeStepPullRequest(ctx, step));
  }
}

function currentManifest(step: StepRow): Manifest | undefined {
  return step.manifest ? manifestSchema.parse(JSON.parse(step.manifest)) : undefined;
}

/**
 * The build loop of one step: invoke the agent with a fresh context, run the gates, and on a gate
 * failure invoke it again with the failure output, up to `limits.max_iterations` sessions.
 */
async function runAgentUntilGatesPass(ctx: RunContext, initial: StepRow, checkout: Checkout): Promise<void> {
  const { deps, run, config } = ctx;
  const { store } = deps;
  const stepId = initial.id;
  // A step interrupted while its gates ran goes straight back to them: the agent's work is on disk.
  let skipAgent = initial.phase === "gates";
  let failedGate: GateResult | undefined;

  for (;;) {
    if (!skipAgent) {
      const sessions = store.sessions(stepId);
      const iteration = Math.max(0, ...sessions.map((s) => s.iteration)) + 1;
      if (iteration - store.step(stepId).iteration_base > config.limits.max_iterations) {
        const last = failedGate ? ` The last failure was \`${failedGate.command}\`.` : "";
        throw new StepError(
          `The gates still fail after ${config.limits.max_iterations} agent sessions (limits.max_iterations).${last}`,
        );
      }
      const spent = store.runCost(run.id);
      if (spent >= config.limits.max_cost_usd) {
        throw new StepError(
          `The run has spent $${spent.toFixed(2)}, which reaches limits.max_cost_usd ($${config.limits.max_cost_usd}); Lisa stopped invoking agents.`,
        );
      }
      const purpose: SessionRow["purpose"] = failedGate
        ? "fix_gates"
        : sessions.at(-1)?.state === "interrupted"
          ? "resume"
          : "implement";
      const prompt = await buildPrompt(ctx, store.step(stepId), checkout, purpose, failedGate);
      store.updateStep(stepId, { phase: "agent" });
      const result = await invokeAgent(ctx, stepId, iteration, purpose, prompt, checkout);
      if (!result.ok) {
        throw new StepError(
          `The agent session failed (${result.failure?.kind ?? "unknown"}): ${result.failure?.message ?? "no details"}`,
        );
      }
      store.updateStep(stepId, { summary: redactSecrets(result.text, ctx.secrets) });
    }
    skipAgent = false;
    store.updateStep(stepId, { phase: "gates" });
    await ctx.publish();
    const results = await runGates(config.gates, {
      cwd: workDir(checkout),
      env: agentEnv(ctx, []),
      timeoutMs: config.limits.gate_timeout,
      secrets: ctx.secrets,
      sandbox: { ...deps.sandbox, ...checkout.scope },
    });
    store.updateStep(stepId, { gates: JSON.stringify(results.map(({ command, passed }) => ({ command, passed }))) });
    failedGate = results.find((result) => !result.passed);
    if (!failedGate) return;
    deps.log.info({ runId: run.id, gate: failedGate.command }, "gate failed; invoking the agent again");
  }
}

function agentEnv(ctx: RunContext, providerEnv: readonly string[]): Record<string, string> {
  const { name, email } = ctx.deps.workspace.author;
  const identity = { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
  return buildAgentEnv(ctx.deps.agentEnvSource, providerEnv, identity, ctx.secrets);
}

async function buildPrompt(
  ctx: RunContext,
  step: StepRow,
  checkout: Checkout,
  purpose: SessionRow["purpose"],
  failedGate: GateResult | undefined,
): Promise<string> {
  const { run, config, deps } = ctx;
  const gates = config.gates.length ? config.gates.map((g) => `\`${g}\``).join(", ") : "(none configured)";
  const common = {
    repo: `${step.owner}/${step.repo}`,
    // With a native worktree the agent works on the CLI's branch; Lisa pushes it as the step's branch.
    branch: checkout.native?.branch ?? step.branch,
    start: step.start_sha ?? checkout.host.startSha,
    issue_number: String(run.issue_number),
    issue_title: redactSecrets(run.issue_title.replace(/\s+/g, " "), ctx.secrets),
    gates,
  };
  if (purpose === "fix_gates" && failedGate) {
    return renderPrompt(deps.promptsDir, "fix-gates", {
      ...common,
      command: failedGate.command,
      failure: fenceAsData(`the output of \`${failedGate.command}\``, failedGate.output),
    });
  }
  return renderPrompt(deps.promptsDir, "implement", {
    ...common,
    issue: fenceAsData(
      `the body of issue #${run.issue_number}, written on GitHub`,
      redactSecrets(run.issue_body || "(no description)", ctx.secrets),
    ),
    plan_context: step.scope ? planContext(ctx, step) : "",
    resume_note:
      purpose === "resume"
        ? "An earlier session on this task was interrupted. Its partial work is in this worktree: look at `git status` and `git log` first and continue from there."
        : "",
  });
}

/** For a step of a plan: its scope, and what the steps before it delivered. */
function planContext(ctx: RunContext, step: StepRow): string {
  const planned = ctx.deps.store.steps(ctx.run.id).filter((s) => s.position > 0);
  const earlier = planned
    .filter((s) => s.position < step.position)
    .map((s) => {
      const summary = (s.summary ?? "").replace(/\s+/g, " ").slice(0, 400);
      return `- Step ${s.position}, \`${s.owner}/${s.repo}\`: branch \`${s.branch}\`, pull request ${s.pr_url ?? "(none)"}. ${summary}`;
    });
  return [
    "## Your part of the plan",
    "",
    `This issue spans several repositories. This is step ${step.position} of ${planned.length}, in \`${step.owner}/${step.repo}\`; change only this repository.`,
    "",
    fenceAsData("what the plan asks of this repository", redactSecrets(step.scope ?? "", ctx.secrets)),
    "",
    earlier.length
      ? `What the earlier steps delivered:\n${redactSecrets(earlier.join("\n"), ctx.secrets)}`
      : "This is the first step.",
  ].join("\n");
}

/** One iteration: the configured providers in order, moving on only when one fails transiently. */
async function invokeAgent(
  ctx: RunContext,
  stepId: number,
  iteration: number,
  purpose: SessionRow["purpose"],
  prompt: string,
  checkout: Checkout,
): Promise<AgentResult> {
  const { deps, config } = ctx;
  let result: AgentResult | undefined;
  for (const choice of config.providers) {
    const provider = providers[choice.name];
    const sessionId = deps.store.startSession({
      step_id: stepId,
      iteration,
      purpose,
      provider: provider.name,
      model: choice.model ?? null,
    });
    await ctx.publish();
    // The provider that owns the native worktree is run from Lisa's checkout and told its name;
    // any other works directly in whatever directory holds the step's work.
    const native = checkout.native?.provider === provider ? checkout.native : undefined;
    result = await runAgent({
      provider,
      binary: deps.agentBinaries[choice.name],
      model: choice.model,
      extraArgs: native ? provider.nativeWorktree?.args(native.name) : [],
      cwd: native ? checkout.host.path : workDir(checkout),
      prompt,
      env: agentEnv(ctx, provider.env),
      timeoutMs: config.limits.session_timeout,
      stallMs: config.limits.stall_timeout,
      sandbox: { ...deps.sandbox, ...checkout.scope },
      onSpawn: (pid) => deps.store.recordSessionPid(sessionId, pid),
    });
    deps.store.finishSession(sessionId, {
      state: result.ok ? "succeeded" : "failed",
      cost_usd: result.costUsd,
      turns: result.turns ?? null,
      failure_kind: result.failure?.kind ?? null,
      message: result.failure ? redactSecrets(result.failure.message, ctx.secrets) : null,
    });
    deps.log.info(
      { runId: ctx.run.id, provider: provider.name, ok: result.ok, failure: result.failure, ms: result.durationMs },
      "agent session ended",
    );
    if (checkout.native && !checkout.nativePath) await settleNativeWorktree(ctx, stepId, checkout, provider, result.ok);
    if (result.ok || !result.failure || !TRANSIENT_FAILURES.has(result.failure.kind)) return result;
  }
  if (!result) throw new StepError("No agent provider is configured.");
  return result;
}

/**
 * After a session of a step whose CLI may make its own worktree, before one exists: find it if the
 * session made it, clear away a failed session's half-made one, and stay in Lisa's checkout once
 * another provider has worked there.
 */
async function settleNativeWorktree(
  ctx: RunContext,
  stepId: number,
  checkout: Checkout,
  provider: Provider,
  ok: boolean,
): Promise<void> {
  const { deps } = ctx;
  const native = checkout.native;
  if (!native) return;
  if (native.provider !== provider) {
    // Another provider did the work in Lisa's checkout: the step stays there from now on.
    if (ok) checkout.native = undefined;
    return;
  }
  // The CLI decides where its worktree goes; find it by the branch it is on.
  const found = await findWorktreeByBranch(deps.workspace, checkout.ref, native.branch);
  if (!ok) {
    // A failed CLI may leave its worktree locked; a later session of it must not pick that up.
    if (found) await removeWorktree(deps.workspace, checkout.ref, { path: found, branch: native.branch });
    return;
  }
  if (!found) throw new StepError(`${provider.name} finished but no worktree is on its branch \`${native.branch}\`.`);
  // The CLI wrote this worktree's `.git`; Lisa's own git must not follow it elsewhere.
  await assertWorktreeOf(mirrorPath(deps.workspace, checkout.ref), found);
  checkout.nativePath = found;
  deps.store.updateStep(stepId, { native_worktree: found });
}

/** Ends a run that cannot go on (for example after repeated restarts) and says so on the issue. */
export async function abandonRun(deps: CoreDeps, runId: number, message: string): Promise<void> {
  const run = deps.store.run(runId);
  if (!run) return;
  for (const step of deps.store.steps(runId)) {
    if (step.state === "running" || step.state === "pending") deps.store.updateStep(step.id, { state: "failed", error: message });
  }
  deps.store.updateRun(runId, { state: "failed", error: message, finished_at: deps.now() });
  const gh = await deps.github(run.installation_id);
  await setStateLabel(gh, { owner: run.owner, repo: run.repo }, run.issue_number, "failed");
  await publishTracking(deps, gh, runId);
}
