import { randomBytes } from "node:crypto";
import type { ProviderChoice } from "../../config/config-schema.ts";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import { processIdentity } from "../../process/process-identity.ts";
import { buildAgentEnv } from "../../providers/agent-env.ts";
import { type ModelAccess, modelAccess } from "../../providers/model-access.ts";
import type { AgentResult } from "../../providers/provider.ts";
import { providers } from "../../providers/registry.ts";
import { runAgent } from "../../providers/run-agent.ts";
import type { GuidanceFeed } from "../../providers/session-input.ts";
import { modelEndpointUrl } from "../../sandbox/run-sandboxed.ts";
import type { SandboxScope } from "../../sandbox/sandbox-settings.ts";
import type { SessionRow } from "../../store/store.ts";
import type { RunContext } from "../context/run-context.ts";
import { agentEgress } from "./network-egress.ts";

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

/** One session of one provider, as the sessions table records it: what it is for, where it runs, what it may reach. */
export interface SessionRequest {
  stepId: number;
  iteration: number;
  purpose: SessionRow["purpose"];
  choice: ProviderChoice;
  prompt: string;
  cwd: string;
  extraArgs?: string[] | undefined;
  scope: SandboxScope;
  /** A judge reads the worktree and reaches only its model API; an agent may change it and reach `allow_hosts`. */
  judging?: boolean;
  guidance?: GuidanceFeed | undefined;
  onLine?: ((line: string) => void) | undefined;
}

/**
 * Runs one provider's CLI in the sandbox with its own model endpoint, recording the session (its
 * pid while it runs, so a restart finds it; its cost and outcome when it ends) and its metrics.
 * `endedByItself` is false when Lisa or a person stopped it.
 */
export async function recordedSession(
  ctx: RunContext,
  request: SessionRequest,
): Promise<{ result: AgentResult; endedByItself: boolean }> {
  const { deps, config } = ctx;
  const { choice, stepId } = request;
  const provider = providers[choice.name];
  const sessionId = await deps.store.sessions.start({
    step_id: stepId,
    pass: ctx.pass.number,
    iteration: request.iteration,
    purpose: request.purpose,
    provider: provider.name,
    model: choice.model ?? null,
  });
  ctx.publish();
  // Recorded while the session runs, so a Lisa killed meanwhile finds the agent's process group.
  let pidRecorded: Promise<void> = Promise.resolve();
  const session = sessionAccess(ctx, choice.name);
  const result = await runAgent({
    provider,
    binary: deps.agentBinaries[choice.name],
    model: choice.model,
    extraArgs: request.extraArgs ?? [],
    cwd: request.cwd,
    prompt: request.prompt,
    env: agentEnv(ctx, provider.env, session?.access),
    timeoutMs: config.limits.session_timeout,
    stallMs: config.limits.stall_timeout,
    sandbox: {
      ...deps.sandbox,
      ...request.scope,
      ...(request.judging ? { readOnlyCwd: true } : {}),
      egress: agentEgress(ctx, stepId, choice.name, session, request.judging ? "model only" : "allowed hosts"),
      homeFiles: session?.access.homeFiles,
    },
    onSpawn: (pid) => {
      pidRecorded = deps.store.sessions.recordPid(sessionId, pid, processIdentity(pid));
      pidRecorded.catch(() => {}); // seen below, once the session is over
    },
    prices: deps.tokenPrices,
    guidance: request.guidance,
    onLine: request.onLine,
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
  return { result, endedByItself };
}
