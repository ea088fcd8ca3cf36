// Over 250 lines: the composition root: every part of a Lisa process is wired here, and nowhere else.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Probot } from "probot";
import { CiSignals } from "./ci/ci-signals.ts";
import type { ProviderName } from "./config/config-schema.ts";
import { MIN_STORE_KEY_BYTES } from "./config/env-schema.ts";
import type { CoreDeps } from "./deps.ts";
import type { GitHubPort } from "./github/github-publisher.ts";
import { type LisaRole, serveOperatorApart, serveOperatorEndpoints } from "./http/operator-endpoints.ts";
import { redeliverMissed, redeliverSinceLastStored } from "./http/redeliver-missed.ts";
import { listenForWebhooks } from "./http/webhook-intake.ts";
import { installationPorts } from "./installation-port.ts";
import { createLisaMetrics } from "./metrics/lisa-metrics.ts";
import { reapOrphans, recordChildrenIn } from "./process/child-registry.ts";
import { GEMINI_PRICES, type TokenPrices } from "./providers/token-prices.ts";
import { checkSandbox } from "./sandbox/check-sandbox.ts";
import type { SandboxSettings } from "./sandbox/sandbox-settings.ts";
import { shareWork } from "./scheduler/shared-work.ts";
import { Worker } from "./scheduler/worker.ts";
import { heldSecrets } from "./security/held-secrets.ts";
import { redactingLog } from "./security/redacting-log.ts";
import { commandKey, keptStoreKey } from "./store/command-mac.ts";
import { Store } from "./store/store.ts";
import { setupCacheRoot, spareCopies } from "./workspace/setup-cache.ts";

export interface LisaOptions {
  /** The App's id (APP_ID): its check runs are found by it, and GitHub is not asked for it. */
  appId?: number;
  /**
   * What command rows are signed with (LISA_STORE_KEY, else the webhook secret); without it, a key
   * Lisa keeps in `dataDir`, which serves one machine only.
   */
  storeKey?: string;
  /** Serve `/metrics` and `/healthz` here, and not beside the webhook path (LISA_METRICS_ADDRESS); port 0 picks one. */
  metricsAddress?: { host: string; port: number };
  /** Where Lisa keeps its SQLite database (without databaseUrl), mirrors and worktrees. */
  dataDir: string;
  /** A `postgres://` URL: the store shared by web and worker processes (DATABASE_URL). */
  databaseUrl?: string;
  /** `web` answers webhooks and runs nothing; `worker` handles commands and runs; `all` both. */
  role?: LisaRole;
  /** This process's name on the runs it claims; the host and data directory by default. */
  workerName?: string;
  /** How long a worker's claim lasts unrenewed before another worker takes its run over (PostgreSQL). */
  leaseSeconds?: number;
  /** A claim lapsed while this worker held its run (see Worker.claimLost). */
  onClaimLost?: (runId: number) => void;
  /** Base URL repositories are cloned from and pushed to: `https://github.com`, a GHES host, or a local folder in tests. */
  gitBaseUrl: string;
  /** Paths of agent CLIs when they are not on PATH under their usual names. */
  agentBinaries?: Partial<Record<ProviderName, string>>;
  /** Environment agents' environments are picked from by allowlist; the process environment by default. */
  agentEnvSource?: NodeJS.ProcessEnv;
  /** Runs executed at the same time. */
  concurrency?: number;
  /** Identity of Lisa's commits. */
  author?: { name: string; email: string };
  /** How agents and gate commands are contained; a bubblewrap sandbox with an empty home by default. */
  sandbox?: SandboxSettings;
  /** What Gemini's tokens cost (USD per million), by model; Google's list prices by default. */
  tokenPrices?: TokenPrices;
  /** Disk the worktrees of failed and blocked runs may keep (LISA_KEPT_WORKTREES_MB); 10 GiB by default. */
  keptWorktreesBytes?: number;
  /** Disk the set-up cache may hold (LISA_CACHE_MAX_BYTES); 20 GiB by default. */
  cacheMaxBytes?: number;
  /** The first pause before a command GitHub failed is tried again (tests shorten it). */
  commandRetryMs?: number;
  /** How often tracking comments GitHub refused are written again (tests shorten it). */
  publishRetryMs?: number;
  /** The least time between two writes of a live check run; 30 s by default (tests shorten it). */
  liveCheckIntervalMs?: number;
  /** The first pause before a run GitHub failed transiently goes on; 15 s by default (tests shorten it). */
  runRetryMs?: number;
  /**
   * GitHub as something other than the App's installations: `lisa run` acts with a person's token,
   * with no App and no webhook.
   */
  githubPort?: (installationId: number) => Promise<GitHubPort>;
  /**
   * Whether an installation's writes wait for their slot in the store (write-pacer.ts); on unless
   * turned off, which only tests do (as they turn Octokit's throttling off), to stay fast.
   */
  paceWrites?: boolean;
  now?: () => number;
}

export interface Lisa {
  store: Store;
  worker: Worker;
  role: LisaRole;
  /** Recovers interrupted runs and starts the worker. */
  start(): Promise<void>;
  /**
   * Once the webhook server listens: asks GitHub again for the webhooks that found no Lisa answering
   * since this store last took one (a deploy's gap, a crash), and looks again twice in the next half
   * minute for any whose redelivery found Lisa not reachable yet. Returns at once; a worker does nothing.
   */
  redeliverMissed(): void;
  /** Resolves when every stored command and run has been handled. */
  idle(): Promise<void>;
  /**
   * Answers `/healthz` and `/metrics` (true), or leaves the request to the next handler (false);
   * with a metrics address of their own, it leaves them all.
   */
  httpHandler(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  /** Where `/metrics` and `/healthz` are served apart from the webhooks, once started with a metrics address. */
  metricsAddress(): AddressInfo | undefined;
  /** Stops the worker after the runs under way, and closes the store. */
  stop(): Promise<void>;
  /**
   * Stops for a deploy: the runs under way get `graceMs` to finish, the rest resume at the next start
   * (Worker.shutdown). `stopServing` is awaited before the store closes: webhooks that arrive during
   * the grace are still stored (GitHub does not deliver a refused one again).
   */
  shutdown(graceMs: number, stopServing?: () => Promise<void>): Promise<void>;
}

const PROMPTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "prompts");

/**
 * Wires Lisa into a Probot instance: webhook handlers that only store commands, and a worker that
 * executes them. The handlers answer in milliseconds; all GitHub and agent work happens in the worker.
 */
export function createLisa(app: Probot, options: LisaOptions): Lisa {
  const role = options.role ?? "all";
  if (role !== "all" && !options.databaseUrl) {
    throw new Error(`lisa ${role} shares its work through PostgreSQL: set DATABASE_URL`);
  }
  if (options.storeKey !== undefined && Buffer.byteLength(options.storeKey) < MIN_STORE_KEY_BYTES) {
    throw new Error(`Lisa's store key must be at least ${MIN_STORE_KEY_BYTES} bytes (LISA_STORE_KEY, else WEBHOOK_SECRET).`);
  }
  const store = new Store(
    options.databaseUrl ?? path.join(options.dataDir, "lisa.db"),
    Date.now,
    commandKey(options.storeKey ?? keptStoreKey(options.dataDir)),
  );
  const held = heldSecrets(options.agentEnvSource ?? process.env, options.sandbox?.homeTemplate);
  const metrics = createLisaMetrics(store, { setupCacheRoot: setupCacheRoot(options.dataDir) });
  const workerName = options.workerName ?? `${hostname()}:${options.dataDir}`;
  const now = options.now ?? Date.now;
  const deps: CoreDeps = {
    store,
    github: options.githubPort
      ? options.githubPort
      : installationPorts(app, { store, metrics, now, pace: options.paceWrites !== false, appId: options.appId }),
    workspace: {
      dataDir: options.dataDir,
      gitBaseUrl: options.gitBaseUrl,
      author: options.author ?? { name: "Lisa", email: "lisa[bot]@users.noreply.github.com" },
      ...(options.cacheMaxBytes === undefined ? {} : { cacheMaxBytes: options.cacheMaxBytes }),
    },
    agentBinaries: options.agentBinaries ?? {},
    agentEnvSource: options.agentEnvSource ?? process.env,
    heldSecrets: held,
    sandbox: options.sandbox ?? { mode: "bwrap" },
    tokenPrices: options.tokenPrices ?? GEMINI_PRICES,
    ...(options.liveCheckIntervalMs === undefined ? {} : { liveCheckIntervalMs: options.liveCheckIntervalMs }),
    ...(options.runRetryMs === undefined ? {} : { runRetryMs: options.runRetryMs }),
    promptsDir: PROMPTS_DIR,
    // Probot creates its logger lazily, so look it up on each call.
    log: redactingLog(
      {
        info: (object, message) => app.log.info(object, message),
        warn: (object, message) => app.log.warn(object, message),
        error: (object, message) => app.log.error(object, message),
      },
      held,
    ),
    now,
    metrics,
    workerName,
    ciSignals: new CiSignals(),
  };
  // Each loss and each return said once: statements in between fail fast as unavailable.
  let lostAt: number | undefined;
  store.onConnection((event) => {
    if (event.kind === "lost") {
      lostAt ??= now();
      metrics.databaseLost("store");
      deps.log.error({ reason: event.error }, "lost the connection to PostgreSQL; reconnecting");
    } else {
      metrics.databaseReconnected();
      deps.log.info({ downMs: event.downMs, attempts: event.attempts }, "reconnected to PostgreSQL");
      const since = lostAt ?? now() - event.downMs;
      lostAt = undefined;
      // Webhooks answered 503 meanwhile are delivered again: GitHub never does so on its own.
      if (role !== "worker")
        void redeliverMissed(app, store, since).then(
          (asked) =>
            asked > 0 && deps.log.info({ asked }, "asked GitHub to redeliver the webhooks missed while PostgreSQL was away"),
          (error: unknown) => deps.log.warn({ err: error }, "could not ask GitHub to redeliver the webhooks missed meanwhile"),
        );
    }
  });
  const takesWork = role !== "web";
  let worker: Worker | undefined;
  const concurrency = options.concurrency ?? 2;
  const { claims, commands } = shareWork(store, {
    databaseUrl: options.databaseUrl,
    leaseSeconds: options.leaseSeconds,
    concurrency,
    takesWork,
    commandRetryMs: options.commandRetryMs,
    onLost: async (runId) => await worker?.claimLost(runId),
    onConnectionLost: () => metrics.databaseLost("claims"),
    log: deps.log,
  });
  worker = new Worker(deps, {
    concurrency,
    claims,
    commands,
    ...(options.commandRetryMs === undefined ? {} : { commandRetryMs: options.commandRetryMs }),
    ...(options.publishRetryMs === undefined ? {} : { publishRetryMs: options.publishRetryMs }),
    ...(options.keptWorktreesBytes === undefined ? {} : { keptWorktreesBytes: options.keptWorktreesBytes }),
    ...(options.onClaimLost ? { onClaimLost: options.onClaimLost } : {}),
  });
  listenForWebhooks(app, {
    store,
    metrics,
    now,
    stored: (command) => worker.commandStored(command),
    ...(deps.ciSignals ? { ciSignals: deps.ciSignals } : {}),
    appId: options.appId,
  });

  // Ends the looks at the delivery log still to come when Lisa stops.
  const redelivering = new AbortController();
  let operatorServer: Server | undefined;
  const closeOperatorServer = async () => {
    const server = operatorServer;
    operatorServer = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  };

  return {
    store,
    worker,
    role,
    async start() {
      // Probot sets up its logger and auth lazily; recovery logs and calls GitHub before any webhook.
      await app.ready();
      if (options.metricsAddress)
        operatorServer = await serveOperatorApart(options.metricsAddress, { store, worker, metrics, role });
      await claims.start();
      await commands.start();
      if (!takesWork) return;
      // What a Lisa killed on this host left running (an unsandboxed gate, a git) ends before any run resumes.
      const children = path.join(options.dataDir, "children");
      const reaped = reapOrphans(children);
      if (reaped > 0) app.log.warn({ reaped }, "ended process groups a killed Lisa left running");
      recordChildrenIn(children);
      await reportSandbox(deps);
      await worker.start();
    },
    redeliverMissed() {
      if (role === "worker") return;
      void redeliverSinceLastStored(app, store, now, redelivering.signal).then(
        (asked) => asked > 0 && deps.log.info({ asked }, "asked GitHub to redeliver the webhooks that found no Lisa answering"),
        (error: unknown) =>
          redelivering.signal.aborted ||
          deps.log.warn({ err: error }, "could not ask GitHub to redeliver the webhooks missed while Lisa was down"),
      );
    },
    idle: () => worker.idle(),
    httpHandler: async (request, response) =>
      !options.metricsAddress && serveOperatorEndpoints(request, response, { store, worker, metrics, role }),
    metricsAddress: () => (operatorServer?.address() as AddressInfo | null) ?? undefined,
    async stop() {
      redelivering.abort();
      await closeOperatorServer();
      await worker.stop();
      await spareCopies();
      await claims.stop();
      await store.close();
    },
    async shutdown(graceMs, stopServing) {
      redelivering.abort();
      await closeOperatorServer();
      await worker.shutdown(graceMs);
      await spareCopies();
      await stopServing?.();
      await claims.stop();
      await store.close();
    },
  };
}

/**
 * Says at start-up how agents are contained. A sandbox that cannot start is an error (every agent
 * session then fails with the same message on its issue); running without one is a loud warning.
 */
async function reportSandbox(deps: CoreDeps): Promise<void> {
  if (deps.sandbox.mode === "off") {
    deps.log.warn(
      { sandbox: "off" },
      "LISA_SANDBOX=off: agents and gate commands run WITHOUT a sandbox, as Lisa's own user. They can read Lisa's environment " +
        "(App private key, webhook secret, model API keys), its database and every repository's mirror. Use this only with trusted agents and repositories.",
    );
    return;
  }
  const problem = await checkSandbox(deps.sandbox);
  if (problem) deps.log.error({ sandbox: deps.sandbox.mode }, `${problem} Until then Lisa refuses to run agents.`);
  else
    deps.log.info({ sandbox: deps.sandbox.mode, homeTemplate: deps.sandbox.homeTemplate }, "agents run in a bubblewrap sandbox");
}
