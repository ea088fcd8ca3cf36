import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";
import type { Store } from "../store/store.ts";
import { setupCacheSize } from "../workspace/setup-cache.ts";

/**
 * What Lisa exposes on `/metrics`, in Prometheus' text format. A registry per Lisa, not prom-client's
 * global one, so two Lisas in one process (the tests) never count into each other. Store-backed
 * figures (runs by state, the queue) are read at each scrape; the rest are counted as they happen.
 */
export function createLisaMetrics(store: Store, options: { setupCacheRoot?: string } = {}) {
  const registry = new Registry();
  const runs = new Gauge({
    name: "lisa_runs",
    help: "Runs by state, as the store has them.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      runs.reset();
      // While the database is gone the figures it holds are missing; the counters below are still served.
      for (const { state, n } of await unlessUnavailable(() => store.runs.countByState(), [])) runs.set({ state }, n);
    },
  });
  const queue = new Gauge({
    name: "lisa_queue_depth",
    help: "Work waiting: pending commands and queued runs.",
    labelNames: ["kind"],
    registers: [registry],
    async collect() {
      queue.reset();
      const depth = await unlessUnavailable(
        async () => ({ commands: await store.commands.pending(), runs: (await store.runs.inState("queued")).length }),
        undefined,
      );
      if (depth) for (const [kind, n] of Object.entries(depth)) queue.set({ kind }, n);
    },
  });
  const sessions = new Counter({
    name: "lisa_sessions_total",
    help: "Agent sessions that ended, by provider and outcome (succeeded, interrupted, or the failure kind).",
    labelNames: ["provider", "outcome"],
    registers: [registry],
  });
  const cost = new Counter({
    name: "lisa_agent_cost_usd_total",
    help: "What agent sessions reported they cost, in US dollars.",
    labelNames: ["provider"],
    registers: [registry],
  });
  const sessionSeconds = new Histogram({
    name: "lisa_session_duration_seconds",
    help: "How long agent sessions took.",
    labelNames: ["provider"],
    buckets: [10, 30, 60, 120, 300, 600, 1_200, 2_700, 3_600],
    registers: [registry],
  });
  const gateSeconds = new Histogram({
    name: "lisa_gate_duration_seconds",
    help: "How long gate commands took.",
    labelNames: ["outcome"],
    buckets: [0.5, 1, 5, 15, 30, 60, 300, 900],
    registers: [registry],
  });
  const connections = new Counter({
    name: "lisa_sandbox_connections_total",
    help: "Connections agents and gates asked Lisa's egress proxy for, by who asked (provider or gate) and outcome (allowed, refused).",
    labelNames: ["who", "outcome"],
    registers: [registry],
  });
  const github = new Counter({
    name: "lisa_github_requests_total",
    help: "Requests to GitHub's API, by method and status (0: no answer).",
    labelNames: ["method", "status"],
    registers: [registry],
  });
  const webhooks = new Histogram({
    name: "lisa_webhook_duration_seconds",
    help: "How long Lisa took to store what a webhook asked, from its arrival.",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const dropped = new Counter({
    name: "lisa_webhooks_dropped_total",
    help: "Webhooks dropped before storing because they cannot concern Lisa, by reason (foreign_label: not the repository's Lisa label; no_lisa_label: an issue closed that carries none of Lisa's labels).",
    labelNames: ["reason"],
    registers: [registry],
  });
  const forged = new Counter({
    name: "lisa_forged_commands_total",
    help: "Command rows refused because Lisa did not write them: their MAC is missing or wrong.",
    registers: [registry],
  });

  const setupCache = new Counter({
    name: "lisa_setup_cache_total",
    help: "Worktrees that looked for their set-up in the cache, by outcome (hit: restored; miss: set-up ran).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const setupSeconds = new Histogram({
    name: "lisa_setup_duration_seconds",
    help: "How long a worktree's set-up commands took, when they ran.",
    buckets: [1, 5, 15, 30, 60, 120, 300, 900],
    registers: [registry],
  });
  const restoreSeconds = new Histogram({
    name: "lisa_setup_restore_duration_seconds",
    help: "How long restoring a worktree's set-up from the cache took.",
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 15, 60],
    registers: [registry],
  });
  const storeSeconds = new Histogram({
    name: "lisa_setup_store_duration_seconds",
    help: "How long storing what set-up made in the cache took, before the step's first session.",
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [registry],
  });
  const cacheBytes = new Gauge({
    name: "lisa_setup_cache_bytes",
    help: "Disk the set-up cache holds on this host.",
    registers: [registry],
    async collect() {
      if (options.setupCacheRoot) cacheBytes.set((await setupCacheSize(options.setupCacheRoot)).bytes);
    },
  });

  const losses = new Counter({
    name: "lisa_database_connection_losses_total",
    help: "Times a connection to PostgreSQL was lost, by connection (store: the store's own; claims: pg-boss's pool).",
    labelNames: ["connection"],
    registers: [registry],
  });
  const reconnects = new Counter({
    name: "lisa_database_reconnects_total",
    help: "Times the store's lost PostgreSQL connection was opened again.",
    registers: [registry],
  });

  return {
    registry,
    databaseLost(connection: "store" | "claims"): void {
      losses.inc({ connection });
    },
    databaseReconnected(): void {
      reconnects.inc();
    },
    forgedCommand(): void {
      forged.inc();
    },
    sessionEnded(provider: string, outcome: string, durationMs: number, costUsd: number): void {
      sessions.inc({ provider, outcome });
      cost.inc({ provider }, costUsd);
      sessionSeconds.observe({ provider }, durationMs / 1_000);
    },
    setupCache(outcome: "hit" | "miss", restoreMs?: number): void {
      setupCache.inc({ outcome });
      if (restoreMs !== undefined) restoreSeconds.observe(restoreMs / 1_000);
    },
    setupRan(durationMs: number): void {
      setupSeconds.observe(durationMs / 1_000);
    },
    setupStored(durationMs: number): void {
      storeSeconds.observe(durationMs / 1_000);
    },
    gateRan(passed: boolean, durationMs: number): void {
      gateSeconds.observe({ outcome: passed ? "passed" : "failed" }, durationMs / 1_000);
    },
    sandboxConnection(who: string, outcome: "allowed" | "refused"): void {
      connections.inc({ who, outcome });
    },
    githubRequest(method: string, status: number): void {
      github.inc({ method, status: String(status) });
    },
    webhookStored(ms: number): void {
      webhooks.observe(ms / 1_000);
    },
    webhookDropped(reason: "foreign_label" | "no_lisa_label"): void {
      dropped.inc({ reason });
    },
  };
}

export type LisaMetrics = ReturnType<typeof createLisaMetrics>;

async function unlessUnavailable<T>(read: () => Promise<T>, otherwise: T): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isDatabaseUnavailable(error)) return otherwise;
    throw error;
  }
}
