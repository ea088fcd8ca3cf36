import type { ModelAccess } from "../../providers/model-access.ts";
import { modelApiUrls } from "../../providers/model-hosts.ts";
import type { ProviderName } from "../../providers/registry.ts";
import { emptyTally, type NetworkTally } from "../../sandbox/egress-proxy.ts";
import { type HostRule, ruleOfUrl, rulesOfAllowedHost } from "../../sandbox/egress-rules.ts";
import type { Egress } from "../../sandbox/sandbox-settings.ts";
import type { RunContext } from "../context/run-context.ts";

/** The connections refused to a step's sandboxes in this pass, kept for its review package. */
export function stepTally(ctx: RunContext, stepId: number): NetworkTally {
  let tally = ctx.network.get(stepId);
  if (!tally) {
    tally = emptyTally();
    ctx.network.set(stepId, tally);
  }
  return tally;
}

function egress(ctx: RunContext, stepId: number, rules: HostRule[], who: string): Egress {
  const { log, metrics } = ctx.deps;
  return {
    rules,
    tally: stepTally(ctx, stepId),
    // `host` is what the sandboxed process asked for: attacker text, logged as a field, never as the message.
    onRefused: (host, reason) => {
      log.warn({ runId: ctx.run.id, stepId, who, host, reason }, "sandbox connection refused");
      metrics.sandboxConnection(who, "refused");
    },
    onAllowed: () => metrics.sandboxConnection(who, "allowed"),
  };
}

/**
 * Where an agent session may connect: the model APIs of `session` through its model endpoint, with
 * credentials Lisa sets; directly (CONNECT), only a model API whose credential the CLI keeps, from
 * Lisa's environment (private only if the operator allows private model APIs), and the repository's
 * `sandbox.allow_hosts`, neither of which ever gets a credential from Lisa. Without `session`, every
 * model API of the provider's is reached directly.
 */
export function agentEgress(
  ctx: RunContext,
  stepId: number,
  provider: ProviderName,
  session?: { access: ModelAccess; capability: string },
  /** `model only` for a judge, which has nothing to install: its model API and nothing else. */
  reach: "allowed hosts" | "model only" = "allowed hosts",
): Egress {
  const { sandbox, agentEnvSource } = ctx.deps;
  const direct = session ? session.access.direct : modelApiUrls(provider, agentEnvSource, sandbox.homeTemplate);
  const models = direct.flatMap((url) => ruleOfUrl(url, sandbox.privateModelApi === true) ?? []);
  const rules = [...models, ...(reach === "model only" ? [] : repositoryHosts(ctx))];
  const routes = session?.access.routes ?? [];
  return {
    ...egress(ctx, stepId, rules, provider),
    ...(routes.length > 0 && session ? { models: { capability: session.capability, routes } } : {}),
  };
}

/**
 * The operator's hosts (LISA_EGRESS_ALLOW, which may be private) first, then the repository's
 * `allow_hosts` (public only): a repository naming the operator's host gains nothing private of its own.
 */
function repositoryHosts(ctx: RunContext): HostRule[] {
  return sandboxHostRules(ctx.deps.sandbox.operatorHosts ?? [], ctx.config.sandbox.allow_hosts);
}

/** The rules for the operator's hosts (which may be private) and a repository's `allow_hosts` (which may not), in that order. */
export function sandboxHostRules(operatorHosts: readonly HostRule[], allowHosts: readonly string[]): HostRule[] {
  return [...operatorHosts, ...allowHosts.flatMap(rulesOfAllowedHost)];
}

/** Where gates may connect: `sandbox.allow_hosts` and the operator's hosts when the config sets `gate_network`, else nowhere (no proxy at all). */
export function gateEgress(ctx: RunContext, stepId: number): Egress | undefined {
  if (!ctx.config.sandbox.gate_network) return undefined;
  return egress(ctx, stepId, repositoryHosts(ctx), "gate");
}

/** Where set-up commands may connect: `sandbox.allow_hosts` and the operator's hosts, always (installing is what they are for). */
export function setupEgress(ctx: RunContext, stepId: number): Egress {
  return egress(ctx, stepId, repositoryHosts(ctx), "setup");
}
