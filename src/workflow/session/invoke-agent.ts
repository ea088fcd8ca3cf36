import { StepError } from "../../errors.ts";
import type { RepoRef } from "../../github/github-port.ts";
import { installedVersion, isAtLeast } from "../../providers/installed-version.ts";
import { type AgentResult, type Provider, TRANSIENT_FAILURES } from "../../providers/provider.ts";
import { providers } from "../../providers/registry.ts";
import type { GuidanceFeed } from "../../providers/session-input.ts";
import type { SandboxScope } from "../../sandbox/sandbox-settings.ts";
import type { SessionRow, StepRow } from "../../store/store.ts";
import type { Worktree } from "../../workspace/create-worktree.ts";
import { findNativeWorktree } from "../../workspace/find-native-worktree.ts";
import { assertWorktreeOf } from "../../workspace/git.ts";
import { removeWorktree } from "../../workspace/remove-worktree.ts";
import { mirrorPath } from "../../workspace/workspace-paths.ts";
import type { RunContext } from "../context/run-context.ts";
import type { LiveCheck } from "./live-check.ts";
import { recordedSession } from "./recorded-session.ts";

/** Where a step's work happens: Lisa's worktree, or the one a CLI made inside it with its own `--worktree`. */
export interface Checkout {
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
export function workDir(checkout: Checkout): string {
  return checkout.nativePath ?? checkout.host.path;
}

/**
 * Lets the CLI make the worktree when the preferred provider can, as told by its installed
 * version; the step then works in that worktree whichever provider runs.
 */
export async function chooseNativeWorktree(ctx: RunContext, step: StepRow): Promise<Checkout["native"]> {
  const [first] = ctx.config.providers;
  const provider = first ? providers[first.name] : undefined;
  if (!first || !provider?.nativeWorktree) return undefined;
  // Set-up prepares Lisa's worktree before the first session; a CLI's own worktree would start without it.
  if (ctx.config.setup.length > 0) return undefined;
  // A CLI makes its worktree from the repository's default branch, not from the step's branch: once
  // the branch holds earlier passes (or human commits), only Lisa's checkout starts from them.
  if (ctx.pass.number > 1 || step.pr_number !== null) return undefined;
  // Work already done in Lisa's checkout this pass (a fallback provider's, or before a restart) stays there.
  const thisPass = (await ctx.deps.store.sessions.of(step.id)).filter((s) => s.iteration > step.iteration_base);
  if (thisPass.length > 0 && !step.native_worktree) return undefined;
  const version = await installedVersion(ctx.deps.agentBinaries[first.name] ?? provider.defaultBinary);
  if (!version || !isAtLeast(version, provider.nativeWorktree.since)) return undefined;
  // The pass is part of the name: a CLI's worktree of pass 1 must not be taken for pass 2's.
  const name = `lisa-${ctx.run.id}-${step.position}-p${ctx.pass.number}-${step.iteration_base}`;
  return { provider, name, branch: provider.nativeWorktree.branch(name) };
}

/** One iteration: the configured providers in order, moving on only when one fails transiently. */
export async function invokeAgent(
  ctx: RunContext,
  stepId: number,
  iteration: number,
  purpose: SessionRow["purpose"],
  prompt: string,
  checkout: Checkout,
  guidance?: GuidanceFeed,
  live?: LiveCheck,
): Promise<AgentResult> {
  let result: AgentResult | undefined;
  for (const choice of ctx.config.providers) {
    const provider = providers[choice.name];
    // The provider that owns the native worktree is run from Lisa's checkout and told its name;
    // any other works directly in whatever directory holds the step's work.
    const native = checkout.native?.provider === provider ? checkout.native : undefined;
    const session = await recordedSession(ctx, {
      stepId,
      iteration,
      purpose,
      choice,
      prompt,
      cwd: native ? checkout.host.path : workDir(checkout),
      extraArgs: native ? provider.nativeWorktree?.args(native.name) : [],
      scope: checkout.scope,
      guidance,
      onLine: live?.session(provider, purpose, workDir(checkout), iteration),
    });
    result = session.result;
    if (checkout.native && !checkout.nativePath) await settleNativeWorktree(ctx, stepId, checkout, provider, result.ok);
    // A session a person stopped (or Lisa interrupted) did not fail: no other provider takes it up.
    if (!session.endedByItself || result.ok || !result.failure || !TRANSIENT_FAILURES.has(result.failure.kind)) return result;
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
  // Found by the branch it is on, and taken only where the CLI makes it: the record is the agent's to forge.
  const found = await findNativeWorktree(deps.workspace, checkout.ref, native);
  if (!ok) {
    // A failed CLI may leave its worktree locked; a later session of it must not pick that up.
    if (found) await removeWorktree(deps.workspace, checkout.ref, { path: found, branch: native.branch });
    return;
  }
  if (!found) throw new StepError(`${provider.name} finished but no worktree is on its branch \`${native.branch}\`.`);
  // The CLI wrote this worktree's `.git`; Lisa's own git must not follow it elsewhere.
  await assertWorktreeOf(mirrorPath(deps.workspace, checkout.ref), found);
  checkout.nativePath = found;
  await deps.store.steps.record(stepId, { native_worktree: found });
}
