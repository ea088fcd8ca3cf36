import path from "node:path";
import type { JudgeConfig, ProviderChoice } from "../../config/config-schema.ts";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import { type AgentResult, TRANSIENT_FAILURES } from "../../providers/provider.ts";
import type { StepRow } from "../../store/store.ts";
import { type WorkingDiff, workingDiff, workingTree } from "../../workspace/working-diff.ts";
import { fenceAsData, renderPrompt } from "../context/render-prompt.ts";
import { assertStillRunning, BlockedError, type RunContext, StepStoppedError } from "../context/run-context.ts";
import { sessionFailure } from "../context/session-failure.ts";
import { type Checkout, workDir } from "../session/invoke-agent.ts";
import { recordedSession } from "../session/recorded-session.ts";
import { readVerdict, type Verdict } from "./judge-verdict.ts";
import { gateFailure, reflectionsThisTry } from "./reflection.ts";
import type { GateResult } from "./run-gates.ts";

/** The pass's diff a judge reads in its prompt; it may open any file of the worktree for the rest. */
const MAX_DIFF_CHARS = 40_000;
/** Changed paths listed in a judge's prompt. */
const MAX_FILES_LISTED = 200;

/** How a judge's result is named among the gates: in reflections, signatures and the package. */
export const judgeCommand = (criterion: string) => `judge: ${criterion}`;

const RETRY_NOTE =
  "Your previous answer had no verdict Lisa could read. Answer again, ending with the JSON object exactly as described above.";

/**
 * After the gates (and anchors) passed: each configured judge whose `paths` the pass touched reads
 * the pass's change and answers PASS or FAIL; the first FAIL ends the round, as a failing gate
 * does, and goes back to the agent. A judge that gives no verdict after a second session blocks
 * the step: no verdict is never a pass.
 */
export async function runJudges(ctx: RunContext, step: StepRow, checkout: Checkout, iteration: number): Promise<GateResult[]> {
  const judges = [...ctx.config.judges, ...(await droppedJudges(ctx, step))];
  if (judges.length === 0) return [];
  const worktree = workDir(checkout);
  const since = (await ctx.deps.store.steps.inPass(step.id, ctx.pass.id))?.start_sha ?? step.start_sha ?? checkout.host.startSha;
  const change = await workingDiff(worktree, since, MAX_DIFF_CHARS);
  const author = await authorOf(ctx, step.id);
  const results: GateResult[] = [];
  for (const judge of judges) {
    const touched = !judge.paths || change.files.some((file) => judge.paths?.some((glob) => path.matchesGlob(file, glob)));
    const result = touched ? await judgeOne(ctx, step, checkout, iteration, judge, change, author) : skipped(judge);
    results.push(result);
    if (!result.passed) break;
  }
  return results;
}

/**
 * Anchors: judges that said PASS in an earlier pass of this step and are no longer configured still
 * judge every later pass, as a dropped gate command still runs, whatever the pass changed.
 */
async function droppedJudges(ctx: RunContext, step: StepRow): Promise<JudgeConfig[]> {
  if (ctx.config.anchors.mode === "off" || ctx.pass.number === 1) return [];
  const anchors = await ctx.deps.store.learnings.anchorsBefore(step.id, ctx.pass.number);
  const configured = new Set(ctx.config.judges.map((j) => j.criterion));
  return anchors.filter((a) => a.kind === "judge" && !configured.has(a.value)).map((a) => ({ criterion: a.value }));
}

function skipped(judge: JudgeConfig): GateResult {
  const reason = `Not run: this pass changed none of its paths (${(judge.paths ?? []).join(", ")}).`;
  return {
    command: judgeCommand(judge.criterion),
    passed: true,
    output: reason,
    durationMs: 0,
    judge: { criterion: judge.criterion, verdict: "SKIPPED", reason },
  };
}

/** The provider of the step's last agent session that succeeded: the one whose work is judged. */
async function authorOf(ctx: RunContext, stepId: number): Promise<string | undefined> {
  const sessions = await ctx.deps.store.sessions.of(stepId);
  return sessions.filter((s) => s.purpose !== "judge" && s.state === "succeeded").at(-1)?.provider;
}

/**
 * Who judges: the judge's own `provider`, else the configured chain with the author's provider
 * last, so another vendor looks whenever one is configured.
 */
export function judgeChain(
  judge: JudgeConfig,
  providers: readonly ProviderChoice[],
  author: string | undefined,
): ProviderChoice[] {
  if (judge.provider) return [judge.provider];
  return [...providers.filter((p) => p.name !== author), ...providers.filter((p) => p.name === author)];
}

async function judgeOne(
  ctx: RunContext,
  step: StepRow,
  checkout: Checkout,
  iteration: number,
  judge: JudgeConfig,
  change: WorkingDiff,
  author: string | undefined,
): Promise<GateResult> {
  const worktree = workDir(checkout);
  const prompt = await judgePrompt(ctx, step, judge, change);
  const chain = judgeChain(judge, ctx.config.providers, author);
  const started = Date.now();
  let problem = "";
  // Only unsandboxed can a judge write: the sandbox shows it the worktree read-only.
  const unconfined = ctx.deps.sandbox.mode === "off";
  for (const attempt of [1, 2]) {
    const { result, provider } = await judgeSession(
      ctx,
      step.id,
      iteration,
      chain,
      attempt === 1 ? prompt : `${prompt}\n\n${RETRY_NOTE}`,
      checkout,
    );
    if (unconfined && (await workingTree(worktree)) !== change.tree)
      throw new BlockedError(`The judge of ${quoted(judge.criterion)} changed the worktree, which a judge may not do.`);
    const verdict = result.ok ? readVerdict(result.text) : undefined;
    if (verdict) return judged(ctx, judge, verdict, provider, Date.now() - started);
    problem = result.ok
      ? `${provider} answered without a verdict`
      : sessionFailure(`The ${provider} session`, result.failure, ctx.secrets);
  }
  throw new BlockedError(
    `The judge of ${quoted(judge.criterion)} gave no verdict in two sessions (the last: ${problem}); Lisa never counts that as a pass.`,
  );
}

/** A criterion in Lisa's own sentences: one line, short. */
const quoted = (criterion: string) => `“${criterion.replace(/\s+/g, " ").slice(0, 120)}”`;

function judged(ctx: RunContext, judge: JudgeConfig, verdict: Verdict, provider: string, durationMs: number): GateResult {
  const reason = redactSecrets(verdict.reason.replace(/\s+/g, " "), ctx.secrets);
  const file = verdict.file ? redactSecrets(verdict.file, ctx.secrets) : undefined;
  const where = file ? ` (${file}${verdict.line ? `:${verdict.line}` : ""})` : "";
  return {
    command: judgeCommand(judge.criterion),
    passed: verdict.verdict === "PASS",
    output: `${verdict.verdict}: ${reason}${where}`,
    durationMs,
    judge: { criterion: judge.criterion, verdict: verdict.verdict, reason, file, line: verdict.line, provider },
  };
}

/** One judge session, on the chain's providers in order until one does not fail transiently. */
async function judgeSession(
  ctx: RunContext,
  stepId: number,
  iteration: number,
  chain: readonly ProviderChoice[],
  prompt: string,
  checkout: Checkout,
): Promise<{ result: AgentResult; provider: string }> {
  const { store } = ctx.deps;
  let last: { result: AgentResult; provider: string } | undefined;
  for (const choice of chain) {
    await assertStillRunning(ctx);
    const spent = await store.runs.cost(ctx.run.id);
    if (spent >= ctx.config.limits.max_cost_usd) {
      throw new BlockedError(
        `The run has spent $${spent.toFixed(2)}, which reaches limits.max_cost_usd ($${ctx.config.limits.max_cost_usd}); Lisa stopped before a judge's session.`,
      );
    }
    const session = await recordedSession(ctx, {
      stepId,
      iteration,
      purpose: "judge",
      choice,
      prompt,
      cwd: workDir(checkout),
      // The mirror is read-only too: a judge's git reads objects, it writes none.
      scope: { readOnly: checkout.scope.mirrors },
      judging: true,
    });
    await assertStillRunning(ctx);
    if (!session.result.ok && (await store.sessions.of(stepId)).at(-1)?.state === "stopped") {
      throw new StepStoppedError(`the judge's session on ${checkout.ref.owner}/${checkout.ref.repo} was stopped`);
    }
    last = { result: session.result, provider: choice.name };
    const kind = session.result.failure?.kind;
    if (session.result.ok || !kind || !TRANSIENT_FAILURES.has(kind)) return last;
  }
  if (!last) throw new BlockedError("No provider is configured to judge.");
  return last;
}

async function judgePrompt(ctx: RunContext, step: StepRow, judge: JudgeConfig, change: WorkingDiff): Promise<string> {
  const { run } = ctx;
  const files = change.files.slice(0, MAX_FILES_LISTED).map((file) => `- ${file}`);
  if (change.files.length > MAX_FILES_LISTED) files.push(`- …and ${change.files.length - MAX_FILES_LISTED} more`);
  const cut = change.cut ? `\n[Lisa cut the diff here: ${change.cut} more characters; open the files to read the rest]` : "";
  return renderPrompt(ctx.deps.promptsDir, "judge", {
    repo: `${step.owner}/${step.repo}`,
    issue_number: String(run.issue_number),
    issue: fenceAsData(
      `the title and body of issue #${run.issue_number}, written on GitHub`,
      redactSecrets(`${run.issue_title}\n\n${run.issue_body || "(no description)"}`, ctx.secrets),
    ),
    criterion: fenceAsData("the criterion, from the repository's `.github/lisa.yml`", judge.criterion),
    files: fenceAsData("the paths this pass changed", redactSecrets(files.join("\n") || "(none)", ctx.secrets)),
    diff: fenceAsData("the pass's diff, written by the agent", redactSecrets(`${change.diff}${cut}`, ctx.secrets)),
  });
}

/**
 * Gives each judge's result the sentence of its last FAIL in this try that a fix session answered,
 * read from the round before (`steps.gates` still holds it): reviewers see what the judge said
 * before the fix beside what it says now.
 */
export async function recallVerdicts(ctx: RunContext, step: StepRow, results: GateResult[]): Promise<void> {
  const answered = new Set((await reflectionsThisTry(ctx, step)).map((r) => r.gate));
  const before = step.gates ?? [];
  for (const result of results) {
    if (!result.judge || !answered.has(result.command)) continue;
    const earlier = before.find((line) => line.command === result.command)?.judge;
    const said = earlier?.verdict === "FAIL" ? earlier.reason : earlier?.earlier;
    if (said) result.judge.earlier = said;
  }
}

/**
 * When a judge's FAIL repeats, in shape, the one the last fix session was sent to answer (Lisa's
 * signature of the sentence, as for a gate's output), one fix did not move the judge and a human
 * decides rather than another session: the reason to block, else undefined.
 */
export async function repeatedVerdict(
  ctx: RunContext,
  step: StepRow,
  failure: GateResult,
  worktree: string,
): Promise<string | undefined> {
  if (!failure.judge) return undefined;
  const last = (await reflectionsThisTry(ctx, step)).at(-1);
  const { gate, signature } = gateFailure(failure, worktree);
  if (last?.gate !== gate || last.signature !== signature) return undefined;
  return `The judge of ${quoted(failure.judge.criterion)} gave the same FAIL before and after a fix: Lisa stopped rather than spend more sessions on it.`;
}
