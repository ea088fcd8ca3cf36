import path from "node:path";
import { z } from "zod";
import { type ProviderName, providers } from "../providers/registry.ts";
import { GEMINI_PRICES, type TokenPrices, tokenPriceSchema } from "../providers/token-prices.ts";
import { parseOperatorHosts } from "../sandbox/egress-rules.ts";
import type { SandboxSettings } from "../sandbox/sandbox-settings.ts";
import { parseDuration } from "./parse-duration.ts";

/** The least key a command row's MAC is keyed with: HMAC-SHA256 has no more strength to give beyond it, and less is guessable. */
export const MIN_STORE_KEY_BYTES = 32;

/** Environment variables Lisa reads at start-up, each with what it accepts. The App's credentials are read apart (app-key.ts). */
export const envSchema = z.object({
  LISA_DATA_DIR: z.string().min(1, "must name a folder").default("data"),
  LISA_GIT_BASE_URL: z
    .string()
    .regex(/^(https?|file):\/\/\S+$/, "must be a URL such as https://github.com or file:///srv/repos")
    .optional(),
  GHE_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+(:\d+)?$/, "must be a host name such as github.example.com, without a scheme or path")
    .optional(),
  GHE_PROTOCOL: z.enum(["https", "http"], { error: "must be https or http" }).default("https"),
  LISA_CONCURRENCY: z
    .string()
    .regex(/^\d+$/, "must be a whole number of runs, e.g. 2")
    .transform(Number)
    .pipe(z.int().min(1, "must be at least 1").max(64, "must be at most 64"))
    .default(2),
  LISA_SANDBOX: z.enum(["bwrap", "off"], { error: 'must be "bwrap" or "off"' }).default("bwrap"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, "must be a PostgreSQL URL such as postgres://lisa@db.example.com/lisa")
    .optional(),
  LISA_ROLE: z.enum(["all", "web", "worker"], { error: "must be all, web or worker" }).default("all"),
  LISA_WORKER_NAME: z
    .string()
    .regex(/^[\w.:@/-]{1,100}$/, "must be a short name of letters, digits and . : @ / - _")
    .optional(),
  LISA_LEASE_SECONDS: z
    .string()
    .regex(/^\d+$/, "must be a whole number of seconds")
    .transform(Number)
    .pipe(z.int().min(10, "must be at least 10 (pg-boss's shortest heartbeat)").max(3600, "must be at most 3600"))
    .default(30),
  LISA_AGENT_HOME: z.string().min(1).optional(),
  /** A model API base URL in this environment may name a loopback or private address (a local gateway, the tests' model server). */
  LISA_ALLOW_PRIVATE_MODEL_API: z.enum(["true", "false"], { error: 'must be "true" or "false"' }).default("false"),
  /** Hosts (`host:port`) every sandbox with a network may reach through the egress proxy even at a private or reserved address: internal registries and mirrors. */
  LISA_EGRESS_ALLOW: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseOperatorHosts(text);
      if ("bad" in parsed) {
        ctx.addIssue({
          code: "custom",
          message: `"${parsed.bad}" is not host:port; write e.g. registry.internal:4873,10.0.0.5:8081`,
        });
        return z.NEVER;
      }
      return parsed.rules;
    })
    .optional(),
  LISA_CACHE_MAX_BYTES: z
    .string()
    .regex(/^\d+$/, "must be a whole number of bytes, e.g. 21474836480")
    .transform(Number)
    .optional(),
  PORT: z
    .string()
    .regex(/^\d+$/, "must be a port number")
    .transform(Number)
    .pipe(z.int().max(65_535, "must be a port number"))
    .optional(),
  HOST: z
    .string()
    .regex(/^[\w.:-]+$/, "must be a host name or address, e.g. 0.0.0.0")
    .default("localhost"),
  WEBHOOK_PATH: z
    .string()
    .regex(/^\/\S*$/, "must be a path such as /api/github/webhooks")
    .default("/api/github/webhooks"),
  WEBHOOK_PROXY_URL: z
    .string()
    .regex(/^https?:\/\/\S+$/, "must be a URL such as https://smee.io/your-channel")
    .optional(),
  LISA_SHUTDOWN_GRACE: z
    .string()
    .transform((value, ctx) => {
      const ms = parseDuration(value);
      if (ms === undefined || ms > 3_600_000) {
        ctx.addIssue({ code: "custom", message: "must be a duration of at most 1h, e.g. 8s or 2m" });
        return z.NEVER;
      }
      return ms;
    })
    .default(8_000),
  LISA_KEPT_WORKTREES_MB: z
    .string()
    .regex(/^\d+$/, "must be a whole number of megabytes, e.g. 10240")
    .transform(Number)
    .default(10_240),
  LISA_GEMINI_PRICES: z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        context.addIssue({ code: "custom", message: "must be JSON" });
        return z.NEVER;
      }
    })
    .pipe(
      z.record(z.string().min(1), tokenPriceSchema, {
        error: 'must map model names to USD per million tokens, e.g. {"gemini-2.5-pro": {"input": 1.25, "output": 10}}',
      }),
    )
    .optional(),
  LISA_STORE_KEY: z
    .string()
    .refine((key) => Buffer.byteLength(key) >= MIN_STORE_KEY_BYTES, "must be at least 32 bytes, e.g. from `openssl rand -hex 32`")
    .optional(),
  LISA_METRICS_ADDRESS: z
    .string()
    .regex(/^(?:(?:[\w.-]+|\[[0-9a-fA-F:]+\]):)?\d{1,5}$/, "must be a port or host:port, e.g. 9464 or 127.0.0.1:9464")
    .transform((value) => {
      const at = value.lastIndexOf(":");
      const host = at === -1 ? "127.0.0.1" : value.slice(0, at).replace(/^\[|\]$/g, "");
      return { host, port: Number(value.slice(at + 1)) };
    })
    .pipe(z.object({ host: z.string(), port: z.int().max(65_535, "must be a port number") }))
    .optional(),
  LOG_LEVEL: z
    .enum(["trace", "debug", "info", "warn", "error", "fatal"], { error: "must be trace, debug, info, warn, error or fatal" })
    .default("info"),
  LOG_FORMAT: z.enum(["json", "pretty"], { error: 'must be "json" or "pretty"' }).optional(),
});

/** What `npm start` runs Lisa with, from its environment. */
export interface LisaSettings {
  dataDir: string;
  /** PostgreSQL shared by web and worker processes; SQLite in dataDir without it. */
  databaseUrl?: string;
  role: "all" | "web" | "worker";
  workerName?: string;
  leaseSeconds: number;
  gitBaseUrl: string;
  concurrency: number;
  /** How long runs under way may go on after SIGTERM before they are handed back (Worker.shutdown). */
  shutdownGraceMs: number;
  sandbox: SandboxSettings;
  agentBinaries: Partial<Record<ProviderName, string>>;
  /** Google's list prices, with LISA_GEMINI_PRICES over them. */
  tokenPrices: TokenPrices;
  /** Disk the worktrees of failed and blocked runs may keep on this machine (trimKeptWorktrees). */
  keptWorktreesBytes: number;
  /** Disk the set-up cache may hold (LISA_CACHE_MAX_BYTES); 20 GiB when unset. */
  cacheMaxBytes?: number;
  /** What command rows are signed with: LISA_STORE_KEY, else the webhook secret; 32 bytes or more. */
  storeKey?: string;
  /** Where `/metrics` and `/healthz` are served instead of beside the webhook path. */
  metricsAddress?: { host: string; port: number };
  /** Lisa's HTTP server (HOST, PORT, WEBHOOK_PATH), and the smee.io channel it forwards from (WEBHOOK_PROXY_URL). */
  http: { host: string; port: number; webhookPath: string; proxyUrl?: string };
  /** GitHub's REST API: github.com's, or the GHES host's `/api/v3`. */
  apiBaseUrl: string;
  /** LOG_LEVEL, and LOG_FORMAT: JSON lines in production (NODE_ENV), readable lines otherwise, as Probot's defaults. */
  log: { level: "trace" | "debug" | "info" | "warn" | "error" | "fatal"; format: "json" | "pretty" };
}

/** Lisa cannot start with this environment; the message has one line per bad variable. */
export class EnvError extends Error {
  override name = "EnvError";
}

/**
 * Reads and checks every variable Lisa takes from its environment. An empty variable counts as
 * unset, as shells and `.env` files leave them.
 * @throws EnvError naming each bad variable, its value and what it accepts
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv): LisaSettings {
  const present = Object.fromEntries(Object.keys(envSchema.shape).flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
  // An empty GHE_PROTOCOL would build `://host` URLs: refuse it rather than treat it as unset.
  if (env.GHE_PROTOCOL === "") present.GHE_PROTOCOL = "";
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      // A key is not echoed, not even a bad one.
      const shown = name === "LISA_STORE_KEY" ? "(not shown)" : JSON.stringify(present[name] ?? "");
      return `${name}=${shown}: ${issue.message}`;
    });
    throw new EnvError(lines.join("\n"));
  }
  const vars = parsed.data;
  if (vars.LISA_ROLE !== "all" && !vars.DATABASE_URL) {
    throw new EnvError(
      `LISA_ROLE=${JSON.stringify(vars.LISA_ROLE)}: web and worker processes share their work through PostgreSQL; set DATABASE_URL too`,
    );
  }
  const storeKey = vars.LISA_STORE_KEY ?? env.WEBHOOK_SECRET;
  if (storeKey && Buffer.byteLength(storeKey) < MIN_STORE_KEY_BYTES) {
    throw new EnvError(
      `WEBHOOK_SECRET=(not shown): is ${Buffer.byteLength(storeKey)} bytes, and without LISA_STORE_KEY it is what Lisa signs the command rows it stores with, which takes at least ${MIN_STORE_KEY_BYTES}; set LISA_STORE_KEY (e.g. from \`openssl rand -hex 32\`, the same in every process) or a longer webhook secret`,
    );
  }
  const agentBinaries: Partial<Record<ProviderName, string>> = {};
  for (const name of Object.keys(providers) as ProviderName[]) {
    const value = env[`LISA_${name.toUpperCase()}_PATH`];
    if (value) agentBinaries[name] = value;
  }
  return {
    dataDir: path.resolve(vars.LISA_DATA_DIR),
    ...(vars.DATABASE_URL ? { databaseUrl: vars.DATABASE_URL } : {}),
    role: vars.LISA_ROLE,
    ...(vars.LISA_WORKER_NAME ? { workerName: vars.LISA_WORKER_NAME } : {}),
    leaseSeconds: vars.LISA_LEASE_SECONDS,
    // GHES: git lives on the same host as the API.
    gitBaseUrl: vars.LISA_GIT_BASE_URL ?? (vars.GHE_HOST ? `${vars.GHE_PROTOCOL}://${vars.GHE_HOST}` : "https://github.com"),
    concurrency: vars.LISA_CONCURRENCY,
    shutdownGraceMs: vars.LISA_SHUTDOWN_GRACE,
    sandbox: {
      mode: vars.LISA_SANDBOX,
      homeTemplate: vars.LISA_AGENT_HOME,
      privateModelApi: vars.LISA_ALLOW_PRIVATE_MODEL_API === "true",
      ...(vars.LISA_EGRESS_ALLOW?.length ? { operatorHosts: vars.LISA_EGRESS_ALLOW } : {}),
    },
    ...(vars.LISA_CACHE_MAX_BYTES === undefined ? {} : { cacheMaxBytes: vars.LISA_CACHE_MAX_BYTES }),
    agentBinaries,
    tokenPrices: { ...GEMINI_PRICES, ...vars.LISA_GEMINI_PRICES },
    keptWorktreesBytes: vars.LISA_KEPT_WORKTREES_MB * 1024 * 1024,
    ...(storeKey ? { storeKey } : {}),
    ...(vars.LISA_METRICS_ADDRESS ? { metricsAddress: vars.LISA_METRICS_ADDRESS } : {}),
    http: {
      host: vars.HOST,
      port: vars.PORT ?? 3000,
      webhookPath: vars.WEBHOOK_PATH,
      ...(vars.WEBHOOK_PROXY_URL ? { proxyUrl: vars.WEBHOOK_PROXY_URL } : {}),
    },
    apiBaseUrl: vars.GHE_HOST ? `${vars.GHE_PROTOCOL}://${vars.GHE_HOST}/api/v3` : "https://api.github.com",
    log: { level: vars.LOG_LEVEL, format: vars.LOG_FORMAT ?? (env.NODE_ENV === "production" ? "json" : "pretty") },
  };
}
