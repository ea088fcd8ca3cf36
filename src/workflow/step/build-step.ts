// Over 250 lines: the build loop keeps its resume state (failed gate, CI failure, steering) in one function's locals.
import { type CiFailure, ciGateName, pendingCiFailure } from "../../ci/ci-failure.ts";
import { StepError } from "../../errors.ts";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import type { FailureKind } from "../../providers/provider.ts";
import type { SessionRow, StepRow } from "../../store/store.ts";
import { anchorsForPrompt, checkAnchors } from "../checks/anchors.ts";
import { recallVerdicts, repeatedVerdict, runJudges } from "../checks/judges.ts";
import { pendingGateFailure } from "../checks/pending-gate-failure.ts";
import { blockOnRepeat, gateFailure, recordReflection, reflectionsForPrompt, reflectionsThisTry } from "../checks/reflection.ts";
import { type GateResult, type RunGatesOptions, runGates } from "../checks/run-gates.ts";
import { fenceAsData, renderPrompt } from "../context/render-prompt.ts";
import { assertStillRunning, BlockedError, type RunContext, StepStoppedError } from "../context/run-context.ts";
import { sessionFailure } from "../context/session-failure.ts";
import { type Checkout, invokeAgent, workDir } from "../session/invoke-agent.ts";
import type { LiveCheck } from "../session/live-check.ts";
import { gateEgress } from "../session/network-egress.ts";
import { agentEnv } from "../session/recorded-session.ts";
import { guidanceItemText } from "./guidance-prompt.ts";
import { memoryForPrompt } from "./memory.ts";
import { prepareWorktree } from "./prepare-worktree.ts";
import { StepGuidance } from "./step-guidance.ts";

/** Failures that say the agent's task went wrong rather than the machinery around it: the human decides. */
const AGENT_SIDE: ReadonlySet<FailureKind> = new Set(["agent_error", "timeout", "stalled"]);

/** How a session takes up the work of the one before it: stopped for guidance, or cut off (a restart). */
type Resumed = "steered" | "interrupted" | undefined;

/**
 * The build loop of one step in one pass: invoke the agent with a fresh context, run the gates,
 * and on a gate failure invoke it again with the failure output, up to `limits.max_iterations`
 * sessions. A CI failure the step was sent back for (`steps.ci_failure`) is the first session's
 * to fix; a gate failure a fix session left unanswered is the next one's, after a restart
 * (`steps.gates`) or a stop for guidance. Gates still red, or the budget spent, block the step; a
 * provider outage fails the run.
 */
export async function buildStep(
  ctx: RunContext,
  initial: StepRow,
  checkout: Checkout,
  /** The pass's live check run (live-check.ts), told each session's output and the gates' results. */
  live?: LiveCheck,
): Promise<GateResult[]> {
  const { deps, run, config } = ctx;
  const { store } = deps;
  const stepId = initial.id;
  // A step interrupted while its gates ran goes straight back to them: the agent's work is on disk.
  let skipAgent = initial.phase === "gates";
  // A fix session cut off by a restart leaves its gate failure in the store: the resumed one answers it.
  let failedGate = skipAgent
    ? undefined
    : pendingGateFailure(initial, await store.sessions.of(stepId), await reflectionsThisTry(ctx, initial));
  // Kept in the store until a session has answered it: a resumed session gets it again.
  let ciFailure = pendingCiFailure(initial, ctx.pass.number);
  const guidance = new StepGuidance(ctx, initial);
  // The last session was stopped for guidance written meanwhile, or ended just as it came.
  let steered = false;
  // Dependencies installed (or restored from the cache) before any session or gate runs.
  await prepareWorktree(ctx, initial, checkout);

  for (;;) {
    await assertStillRunning(ctx);
    if (!skipAgent) {
      const sessions = await store.sessions.of(stepId);
      const iteration = Math.max(0, ...sessions.map((s) => s.iteration)) + 1;
      const step = await store.steps.get(stepId);
      if (iteration - step.iteration_base > config.limits.max_iterations) {
        const last = failedGate ? ` The last failure was \`${failedGate.command}\`.` : "";
        throw new BlockedError(
          `The gates still fail after ${config.limits.max_iterations} agent sessions (limits.max_iterations).${last}`,
        );
      }
      const spent = await store.runs.cost(run.id);
      if (spent >= config.limits.max_cost_usd) {
        throw new BlockedError(
          `The run has spent $${spent.toFixed(2)}, which reaches limits.max_cost_usd ($${config.limits.max_cost_usd}); Lisa stopped invoking agents.`,
        );
      }
      // A judge's session is no work of the agent's to resume.
      const thisTry = sessions.filter((s) => s.iteration > step.iteration_base && s.purpose !== "judge");
      const resumed: Resumed = steered ? "steered" : thisTry.at(-1)?.state === "interrupted" ? "interrupted" : undefined;
      const purpose: SessionRow["purpose"] = failedGate
        ? failedGate.judge
          ? "fix_judge"
          : "fix_gates"
        : ciFailure
          ? "fix_ci"
          : resumed
            ? "resume"
            : ctx.pass.number > 1
              ? "revise"
              : "implement";
      await guidance.allInPrompt();
      const prompt = await buildPrompt(ctx, step, checkout, purpose, failedGate, resumed, ciFailure);
      await store.steps.enterPhase(stepId, "agent");
      const result = await invokeAgent(ctx, stepId, iteration, purpose, prompt, checkout, guidance.feed(), live);
      // A session ended because Lisa stopped the run is not the agent's failure.
      await assertStillRunning(ctx);
      // Nor is one a person stopped on this step alone (its pull request closed mid-pass).
      if (!result.ok && (await store.sessions.of(stepId)).at(-1)?.state === "stopped") {
        throw new StepStoppedError(`the session on ${initial.owner}/${initial.repo} was stopped`);
      }
      if (result.ok) await store.steps.record(stepId, { summary: redactSecrets(result.text, ctx.secrets) });
      // Guidance the session was stopped for, or that came as it ended, is this pass's: a session resumes with it.
      steered = result.steered === true || (result.ok && (await guidance.fresh()).length > 0);
      // The failure stays the resumed session's to fix, as a CI failure does (ci_failure).
      if (steered) continue;
      if (!result.ok) {
        const kind = result.failure?.kind ?? "agent_error";
        const message = sessionFailure("The agent session", result.failure, ctx.secrets);
        throw AGENT_SIDE.has(kind) ? new BlockedError(message) : new StepError(message);
      }
      if (failedGate) await recordReflection(ctx, step, iteration, gateFailure(failedGate, workDir(checkout)), workDir(checkout));
      else if (purpose === "fix_ci" && ciFailure) {
        const failure = { gate: ciGateName(ciFailure.names), signature: ciFailure.signature };
        await recordReflection(ctx, step, iteration, failure, workDir(checkout));
        await store.steps.record(stepId, { ci_failure: null });
        ciFailure = undefined;
      }
    }
    skipAgent = false;
    await store.steps.enterPhase(stepId, "gates");
    ctx.publish();
    const gateOptions = stepGateOptions(ctx, stepId, checkout);
    const results = await runGates(config.gates, gateOptions);
    // Green gates are not enough in a later pass: what earlier passes proved must still hold.
    if (results.every((r) => r.passed))
      results.push(...(await checkAnchors(ctx, await store.steps.get(stepId), workDir(checkout), gateOptions)));
    // Then what no command can check: each judge's criterion, answered by another model.
    if (results.every((r) => r.passed)) {
      const iteration = Math.max(0, ...(await store.sessions.of(stepId)).map((s) => s.iteration));
      results.push(...(await runJudges(ctx, await store.steps.get(stepId), checkout, iteration)));
    }
    await assertStillRunning(ctx);
    for (const gate of results) if (!gate.judge) deps.metrics.gateRan(gate.passed, gate.durationMs);
    // A failing gate keeps its output (runGates keeps only the tail, redacted) for the tracking comment,
    // where a blocked step says what failed, and whole for a resumed fix session (pending-gate-failure.ts):
    // the same output gives it the same prompt and its reflection the same signature.
    failedGate = results.find((result) => !result.passed);
    // Still the round before's gates: this round's are recorded below.
    const before = await store.steps.get(stepId);
    await recallVerdicts(ctx, before, results);
    const repeated = failedGate && (await repeatedVerdict(ctx, before, failedGate, workDir(checkout)));
    const lines = results.map(({ command, passed, output, judge }) => ({
      command,
      passed,
      ...(passed ? {} : { output }),
      ...(judge ? { judge } : {}),
    }));
    await store.steps.record(stepId, { gates: lines });
    live?.gates(lines);
    if (!failedGate) return results;
    if (repeated) throw new BlockedError(repeated);
    await blockOnRepeat(ctx, await store.steps.get(stepId), failedGate, workDir(checkout));
    deps.log.info({ runId: run.id, gate: failedGate.command }, "gate failed; invoking the agent again");
  }
}

/** How a step's gates run: in its worktree and sandbox, with the agent's environment and the gates' egress. */
function stepGateOptions(ctx: RunContext, stepId: number, checkout: Checkout): RunGatesOptions {
  return {
    cwd: workDir(checkout),
    env: agentEnv(ctx, []),
    timeoutMs: ctx.config.limits.gate_timeout,
    secrets: ctx.secrets,
    sandbox: { ...ctx.deps.sandbox, ...checkout.scope, egress: gateEgress(ctx, stepId) },
  };
}

/** The configured gates run once at a step's checkout, each counted in the metrics. */
export async function runStepGates(ctx: RunContext, stepId: number, checkout: Checkout): Promise<GateResult[]> {
  const results = await runGates(ctx.config.gates, stepGateOptions(ctx, stepId, checkout));
  for (const gate of results) ctx.deps.metrics.gateRan(gate.passed, gate.durationMs);
  return results;
}

/** Runs the gates once more, e.g. after rebasing onto a human's push; red gates block the step. */
export async function verifyGates(ctx: RunContext, stepId: number, checkout: Checkout): Promise<void> {
  const results = await runStepGates(ctx, stepId, checkout);
  const failed = results.find((result) => !result.passed);
  if (failed) throw new BlockedError(`After taking in the commits pushed meanwhile, \`${failed.command}\` fails.`);
}

async function buildPrompt(
  ctx: RunContext,
  step: StepRow,
  checkout: Checkout,
  purpose: SessionRow["purpose"],
  failedGate: GateResult | undefined,
  resumed: Resumed,
  ciFailure: CiFailure | undefined,
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
    memory: await memoryForPrompt(ctx, workDir(checkout), step.base_branch),
  };
  if (purpose === "fix_gates" && failedGate) {
    return renderPrompt(deps.promptsDir, "fix-gates", {
      ...common,
      command: failedGate.command,
      failure: fenceAsData(`the output of \`${failedGate.command}\``, failedGate.output),
      reflections: reflectionsForPrompt(ctx, await reflectionsThisTry(ctx, step)),
      ...(await fixResumed(ctx, step, resumed, "this gate failure")),
    });
  }
  if (purpose === "fix_judge" && failedGate?.judge) {
    return renderPrompt(deps.promptsDir, "fix-judge", {
      ...common,
      criterion: fenceAsData("the criterion, from the repository's `.github/lisa.yml`", failedGate.judge.criterion),
      verdict: fenceAsData("the judge's verdict", failedGate.output),
      reflections: reflectionsForPrompt(ctx, await reflectionsThisTry(ctx, step)),
      ...(await fixResumed(ctx, step, resumed, "this verdict")),
    });
  }
  if (purpose === "fix_ci" && ciFailure) {
    return renderPrompt(deps.promptsDir, "fix-ci", {
      ...common,
      failure: fenceAsData("the report of the pull request's CI", ciFailure.report),
      reflections: reflectionsForPrompt(ctx, await reflectionsThisTry(ctx, step)),
      ...(await fixResumed(ctx, step, resumed, "this CI failure")),
    });
  }
  const issue = fenceAsData(
    `the body of issue #${run.issue_number}, written on GitHub`,
    redactSecrets(run.issue_body || "(no description)", ctx.secrets),
  );
  const resumeNote =
    resumed === "steered"
      ? STEERED_NOTE
      : purpose === "resume"
        ? "An earlier session on this task was interrupted. Its partial work is in this worktree: look at `git status` and `git log` first and continue from there."
        : "";
  if (purpose === "revise" || (purpose === "resume" && ctx.pass.number > 1)) {
    return renderPrompt(deps.promptsDir, "revise", {
      ...common,
      pass: String(ctx.pass.number),
      issue,
      plan_context: step.scope ? await planContext(ctx, step) : "",
      human_commits: await humanCommitsNote(ctx, step),
      guidance: await guidanceSection(ctx, step),
      ledger: await ledgerSection(ctx),
      anchors: await anchorsForPrompt(ctx, step),
      resume_note: resumeNote,
    });
  }
  // Notes given with `/lisa fix` in pass 1 reach the agent too.
  const notes = (await ctx.deps.store.guidance.forPass(ctx.pass.id)).length
    ? `## Guidance from the reviewers\n\n${await guidanceSection(ctx, step)}`
    : "";
  return renderPrompt(deps.promptsDir, "implement", {
    ...common,
    issue,
    plan_context: step.scope ? await planContext(ctx, step) : "",
    guidance: notes,
    resume_note: resumeNote,
  });
}

/** The resume of a session stopped for guidance: the guidance is the prompt's, the manifest reports on it even in pass 1. */
const STEERED_NOTE = [
  "An earlier session on this task was stopped to give you guidance the reviewers wrote while it worked: the last items of the guidance in this prompt.",
  "Its partial work is in this worktree: look at `git status` and `git log` first, continue from there, and take the new guidance in.",
  'In `.lisa-manifest.json`, report what you did with each guidance item in a `guidance` list: `[{ "id": "g1", "status": "addressed", "note": "How." }]`, where `status` is one of `addressed`, `partly`, `not_addressed`, `not_applicable`.',
].join(" ");

/**
 * What a fix prompt (gates or CI) says of the session it resumes: the failure stays the prompt's, the
 * partial fix is the worktree's; resumed for guidance, the session gets the guidance too, as the note says.
 */
async function fixResumed(
  ctx: RunContext,
  step: StepRow,
  resumed: Resumed,
  failure: string,
): Promise<{ resume_note: string; guidance: string }> {
  if (resumed === "steered")
    return {
      resume_note: `${STEERED_NOTE}\n\n`,
      guidance: `## Guidance from the reviewers\n\n${await guidanceSection(ctx, step)}\n\n`,
    };
  if (resumed === "interrupted")
    return {
      resume_note: `An earlier session fixing ${failure} was interrupted. Its partial work is in this worktree: look at \`git status\` and \`git log\` first and continue from there.\n\n`,
      guidance: "",
    };
  return { resume_note: "", guidance: "" };
}

async function humanCommitsNote(ctx: RunContext, step: StepRow): Promise<string> {
  const record = await ctx.deps.store.steps.inPass(step.id, ctx.pass.id);
  const commits = record?.human_shas ?? [];
  if (commits.length === 0) return "";
  const lines = commits.map((c) => `- \`${c.sha.slice(0, 7)}\` by ${c.author}: ${c.subject.replace(/\s+/g, " ").slice(0, 120)}`);
  return [
    "People pushed these commits to the branch since your last pass. Keep them: build on them, do not revert them.",
    fenceAsData("the human commits on this branch", redactSecrets(lines.join("\n"), ctx.secrets)),
  ].join("\n");
}

/** This pass's guidance as numbered items g1…gk, each fenced as data with its author and place in the diff. */
async function guidanceSection(ctx: RunContext, step: StepRow): Promise<string> {
  const items = await ctx.deps.store.guidance.forPass(ctx.pass.id);
  if (items.length === 0)
    return "No new guidance was given for this pass; improve the change where the issue and the ledger below ask.";
  return items.map((item, index) => guidanceItemText(ctx, step, item, index)).join("\n\n");
}

/** Guidance of earlier passes: it must still hold. */
async function ledgerSection(ctx: RunContext): Promise<string> {
  const earlier = (await ctx.deps.store.guidance.ledger(ctx.run.id)).filter((g) => g.pass < ctx.pass.number);
  if (earlier.length === 0) return "";
  const lines = earlier.map((g) => `- pass ${g.pass}, ${g.author}: ${g.body.replace(/\s+/g, " ").slice(0, 300)}`);
  return [
    "## Earlier guidance that must still hold",
    "",
    fenceAsData("guidance of earlier passes", redactSecrets(lines.join("\n"), ctx.secrets)),
  ].join("\n");
}

/** For a step of a plan: its scope, and what the steps before it delivered. */
async function planContext(ctx: RunContext, step: StepRow): Promise<string> {
  const planned = (await ctx.deps.store.steps.of(ctx.run.id)).filter((s) => s.position > 0);
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
