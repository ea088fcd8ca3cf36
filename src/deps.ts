import type { CiSignals } from "./ci/ci-signals.ts";
import type { ProviderName } from "./config/config-schema.ts";
import type { GitHubReader } from "./github/github-port.ts";
import type { LisaMetrics } from "./metrics/lisa-metrics.ts";
import type { TokenPrices } from "./providers/token-prices.ts";
import type { SandboxSettings } from "./sandbox/sandbox-settings.ts";
import type { Log } from "./security/redacting-log.ts";
import type { Store } from "./store/store.ts";
import type { WorkspaceOptions } from "./workspace/workspace-paths.ts";

/** Everything the core needs from the outside world, passed as one object so tests can supply their own. */
export interface CoreDeps {
  store: Store;
  /** A GitHub port authenticated as the given installation. */
  github(installationId: number): Promise<GitHubReader>;
  workspace: WorkspaceOptions;
  /** Operator-configured paths of agent CLIs; each provider's default name on PATH otherwise. */
  agentBinaries: Partial<Record<ProviderName, string>>;
  /** The environment agent environments are picked from (allowlisted, never passed whole). */
  agentEnvSource: NodeJS.ProcessEnv;
  /** Secret values Lisa holds (see heldSecrets): redacted from all it writes, refused in all it pushes. */
  heldSecrets: readonly string[];
  /** How agent sessions and gate commands are contained. */
  sandbox: SandboxSettings;
  /** What model tokens cost, for a CLI that reports tokens and no cost (Gemini CLI). */
  tokenPrices: TokenPrices;
  /** The least time between two writes of a live check run (publication/live-check.ts); tests shorten it. */
  liveCheckIntervalMs?: number;
  /** The first pause before a run GitHub failed transiently goes on (scheduler/run-executions.ts); tests shorten it. */
  runRetryMs?: number;
  promptsDir: string;
  log: Log;
  /** What `/metrics` shows; the core counts sessions and gates into it. */
  metrics: LisaMetrics;
  now(): number;
  /** This worker process's name (LISA_WORKER_NAME), recorded on the runs it claims. */
  workerName: string;
  /** Wakes runs waiting for a head's CI when its webhooks arrive; they poll without it. */
  ciSignals?: CiSignals;
}
