import { randomBytes } from "node:crypto";
import { StepError } from "../errors.ts";
import type { RepoRef } from "../github/github-port.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { processIdentity } from "../process/process-identity.ts";
import { buildAgentEnv } from "../providers/agent-env.ts";
import { installedVersion, isAtLeast } from "../providers/installed-version.ts";
import { type ModelAccess, modelAccess } from "../providers/model-access.ts";
import { type AgentResult, type Provider, TRANSIENT_FAILURES } from "../providers/provider.ts";
import { providers } from "../providers/registry.ts";
import { runAgent } from "../providers/run-agent.ts";
import type { GuidanceFeed } from "../providers/session-input.ts";
import { modelEndpointUrl } from "../sandbox/run-sandboxed.ts";
import type { SandboxScope } from "../sandbox/sandbox-settings.ts";
import type { SessionRow, StepRow } from "../store/store.ts";
import type { RunContext } from "../workflow/run-context.ts";
import type { Worktree } from "../workspace/create-worktree.ts";
import { findNativeWorktree } from "../workspace/find-native-worktree.ts";
import { assertWorktreeOf } from "../workspace/git.ts";
import { removeWorktree } from "../workspace/remove-worktree.ts";
import { mirrorPath } from "../workspace/workspace-paths.ts";
import type { LiveCheck } from "./live-check.ts";
import { agentEgress } from "./network-egress.ts";

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

/**
 * An agent's environment: the allowlist (buildAgentEnv), with its model credentials replaced by
 * what `access` gives it instead (placeholders, and base URLs that lead to Lisa's model endpoint).
 */
export function agentEnv(ctx: RunContext, providerEnv: readonly string[], access?: ModelAccess): Record<string, string> {
  const { name, email } = ctx.deps.workspace.author;
  const identity = { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
  const withheld = new Set(access?.withheld);
  // A key the proxy cannot set for it is the one secret its agent must still get; every other value Lisa holds is dropped.
  const own = new Set(providerEnv.filter((name) => !withheld.has(name)).map((name) => ctx.deps.agentEnvSource[name]?.trim()));
  const env = buildAgentEnv(
    ctx.deps.agentEnvSource,
    providerEnv.filter((name) => !withheld.has(name)),
    identity,
    ctx.secrets.filter((secret) => !own.has(secret)),
  );
  return { ...env, ...access?.env };
}

/**
 * How one session reaches its model API: through a model endpoint of its own (a fresh capability in
 * its base URL), unless its sandbox has no egress proxy to put one on (`LISA_SANDBOX=off`).
 */
function sessionAccess(
  ctx: RunContext,
  provider: keyof typeof providers,
): { access: ModelAccess; capability: string } | undefined {
  const { sandbox, agentEnvSource } = ctx.deps;
  if (sandbox.mode === "off" || sandbox.network === "shared") return undefined;
  const capability = randomBytes(32).toString("base64url");
  const endpoint = modelEndpointUrl(capability);
  return {
    access: modelAccess(provider, agentEnvSource, sandbox.homeTemplate, endpoint, sandbox.privateModelApi === true),
    capability,
  };
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
  const { deps, config } = ctx;
  let result: AgentResult | undefined;
  for (const choice of config.providers) {
    const provider = providers[choice.name];
    const sessionId = await deps.store.sessions.start({
      step_id: stepId,
      pass: ctx.pass.number,
      iteration,
      purpose,
      provider: provider.name,
      model: choice.model ?? null,
    });
    ctx.publish();
    // The provider that owns the native worktree is run from Lisa's checkout and told its name;
    // any other works directly in whatever directory holds the step's work.
    const native = checkout.native?.provider === provider ? checkout.native : undefined;
    // Recorded while the session runs, so a Lisa killed meanwhile finds the agent's process group.
    let pidRecorded: Promise<void> = Promise.resolve();
    const session = sessionAccess(ctx, choice.name);
    result = await runAgent({
      provider,
      binary: deps.agentBinaries[choice.name],
      model: choice.model,
      extraArgs: native ? provider.nativeWorktree?.args(native.name) : [],
      cwd: native ? checkout.host.path : workDir(checkout),
      prompt,
      env: agentEnv(ctx, provider.env, session?.access),
      timeoutMs: config.limits.session_timeout,
      stallMs: config.limits.stall_timeout,
      sandbox: {
        ...deps.sandbox,
        ...checkout.scope,
        egress: agentEgress(ctx, stepId, choice.name, session),
        homeFiles: session?.access.homeFiles,
      },
      onSpawn: (pid) => {
        pidRecorded = deps.store.sessions.recordPid(sessionId, pid, processIdentity(pid));
        pidRecorded.catch(() => {}); // seen below, once the session is over
      },
      prices: deps.tokenPrices,
      guidance,
      onLine: live?.session(provider, purpose, workDir(checkout), iteration),
    });
    await pidRecorded;
    const endedByItself = await deps.store.sessions.finish(sessionId, {
      state: result.steered ? "interrupted" : result.ok ? "succeeded" : "failed",
      cost_usd: result.costUsd,
      turns: result.turns ?? null,
      failure_kind: result.failure?.kind ?? null,
      message: result.steered
        ? "stopped to take in guidance written meanwhile"
        : result.failure
          ? redactSecrets(result.failure.message, ctx.secrets)
          : null,
    });
    // A session Lisa interrupted (a shutdown hands its run back) or a person stopped did not end by
    // itself: its CLI killed by a signal is no crash, and is not counted as one.
    const outcome = !endedByItself ? "interrupted" : result.ok ? "succeeded" : (result.failure?.kind ?? "failed");
    deps.log.info(
      endedByItself
        ? { runId: ctx.run.id, provider: provider.name, ok: result.ok, failure: result.failure, ms: result.durationMs }
        : { runId: ctx.run.id, provider: provider.name, outcome, ms: result.durationMs },
      endedByItself ? "agent session ended" : "agent session stopped by Lisa or a person, as recorded",
    );
    deps.metrics.sessionEnded(provider.name, outcome, result.durationMs, result.costUsd);
    if (checkout.native && !checkout.nativePath) await settleNativeWorktree(ctx, stepId, checkout, provider, result.ok);
    // A session a person stopped (or Lisa interrupted) did not fail: no other provider takes it up.
    if (!endedByItself || result.ok || !result.failure || !TRANSIENT_FAILURES.has(result.failure.kind)) return result;
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
