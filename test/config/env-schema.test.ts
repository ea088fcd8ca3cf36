import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvError, settingsFromEnv } from "../../src/config/env-schema.ts";
import { GEMINI_PRICES } from "../../src/providers/token-prices.ts";
import { tempDir } from "../support/git-fixtures.ts";

describe("settingsFromEnv", () => {
  it("gives the defaults for an empty environment", () => {
    expect(settingsFromEnv({})).toEqual({
      dataDir: path.resolve("data"),
      role: "all",
      leaseSeconds: 30,
      gitBaseUrl: "https://github.com",
      concurrency: 2,
      shutdownGraceMs: 8_000,
      sandbox: { mode: "bwrap", homeTemplate: undefined, privateModelApi: false },
      agentBinaries: {},
      tokenPrices: GEMINI_PRICES,
      keptWorktreesBytes: 10 * 1024 ** 3,
      http: { host: "localhost", port: 3000, webhookPath: "/api/github/webhooks" },
      apiBaseUrl: "https://api.github.com",
      log: { level: "info", format: "pretty" },
    });
  });

  it("reads every variable it knows", () => {
    const settings = settingsFromEnv({
      LISA_DATA_DIR: "/var/lib/lisa",
      GHE_HOST: "github.example.com",
      GHE_PROTOCOL: "http",
      LISA_CONCURRENCY: "4",
      LISA_SHUTDOWN_GRACE: "2m",
      LISA_SANDBOX: "off",
      LISA_AGENT_HOME: "/etc/lisa/home",
      LISA_ALLOW_PRIVATE_MODEL_API: "true",
      LISA_CLAUDE_PATH: "/opt/claude/bin/claude",
      LISA_GEMINI_PRICES: '{"gemini-2.5-pro": {"input": 1, "output": 8}, "gemini-exp": {"input": 0, "output": 0}}',
      DATABASE_URL: "postgres://lisa@db.example.com/lisa",
      LISA_ROLE: "worker",
      LISA_WORKER_NAME: "worker-1",
      LISA_LEASE_SECONDS: "45",
      LISA_KEPT_WORKTREES_MB: "512",
      LISA_STORE_KEY: "k".repeat(32),
      WEBHOOK_SECRET: "the-webhook-secret",
      LISA_METRICS_ADDRESS: "127.0.0.1:9464",
      HOST: "0.0.0.0",
      PORT: "8080",
      WEBHOOK_PATH: "/hooks",
      WEBHOOK_PROXY_URL: "https://smee.io/a-channel",
      LOG_LEVEL: "debug",
      LOG_FORMAT: "json",
    });
    expect(settings).toEqual({
      dataDir: "/var/lib/lisa",
      databaseUrl: "postgres://lisa@db.example.com/lisa",
      role: "worker",
      workerName: "worker-1",
      leaseSeconds: 45,
      gitBaseUrl: "http://github.example.com",
      concurrency: 4,
      shutdownGraceMs: 120_000,
      sandbox: { mode: "off", homeTemplate: "/etc/lisa/home", privateModelApi: true },
      agentBinaries: { claude: "/opt/claude/bin/claude" },
      tokenPrices: {
        ...GEMINI_PRICES,
        "gemini-2.5-pro": { input: 1, output: 8 },
        "gemini-exp": { input: 0, output: 0 },
      },
      keptWorktreesBytes: 512 * 1024 ** 2,
      storeKey: "k".repeat(32),
      metricsAddress: { host: "127.0.0.1", port: 9464 },
      http: { host: "0.0.0.0", port: 8080, webhookPath: "/hooks", proxyUrl: "https://smee.io/a-channel" },
      apiBaseUrl: "http://github.example.com/api/v3",
      log: { level: "debug", format: "json" },
    });
    // JSON lines in production unless LOG_FORMAT says otherwise, as Probot's `run` had it.
    expect(settingsFromEnv({ NODE_ENV: "production" }).log.format).toBe("json");
    expect(settingsFromEnv({ NODE_ENV: "production", LOG_FORMAT: "pretty" }).log.format).toBe("pretty");
    // Without a key of their own, command rows are signed with one from the webhook secret.
    const webhookSecret = "the-webhook-secret-of-at-least-32-bytes";
    expect(settingsFromEnv({ WEBHOOK_SECRET: webhookSecret }).storeKey).toBe(webhookSecret);
    expect(settingsFromEnv({ LISA_METRICS_ADDRESS: "9464" }).metricsAddress).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(settingsFromEnv({ LISA_METRICS_ADDRESS: "[::1]:9464" }).metricsAddress).toEqual({ host: "::1", port: 9464 });
    expect(settingsFromEnv({ LISA_GIT_BASE_URL: "file:///srv/repos", GHE_HOST: "x.test" }).gitBaseUrl).toBe("file:///srv/repos");
  });

  it("names every bad variable at once, with its value and what it takes", () => {
    const bad = () =>
      settingsFromEnv({
        LISA_CONCURRENCY: "two",
        GHE_PROTOCOL: "",
        LISA_SANDBOX: "docker",
        GHE_HOST: "https://x.test/",
        PORT: "http",
        DATABASE_URL: "mysql://db/lisa",
        LISA_LEASE_SECONDS: "5",
        LISA_KEPT_WORKTREES_MB: "10G",
        WEBHOOK_PROXY_URL: "smee.io/a-channel",
        WEBHOOK_PATH: "api/github/webhooks",
        // Probot's typings allow only the good values; an operator's environment is not typed.
        LOG_FORMAT: "yaml" as "json",
      });
    expect(bad).toThrow(EnvError);
    const lines = (() => {
      try {
        bad();
        return [];
      } catch (error) {
        return (error as Error).message.split("\n");
      }
    })();
    expect(lines).toEqual(
      expect.arrayContaining([
        'LISA_CONCURRENCY="two": must be a whole number of runs, e.g. 2',
        'GHE_PROTOCOL="": must be https or http',
        'LISA_SANDBOX="docker": must be "bwrap" or "off"',
        'GHE_HOST="https://x.test/": must be a host name such as github.example.com, without a scheme or path',
        'PORT="http": must be a port number',
        'DATABASE_URL="mysql://db/lisa": must be a PostgreSQL URL such as postgres://lisa@db.example.com/lisa',
        'LISA_LEASE_SECONDS="5": must be at least 10 (pg-boss\'s shortest heartbeat)',
        'LISA_KEPT_WORKTREES_MB="10G": must be a whole number of megabytes, e.g. 10240',
        'WEBHOOK_PROXY_URL="smee.io/a-channel": must be a URL such as https://smee.io/your-channel',
        'WEBHOOK_PATH="api/github/webhooks": must be a path such as /api/github/webhooks',
        'LOG_FORMAT="yaml": must be "json" or "pretty"',
      ]),
    );
    expect(() => settingsFromEnv({ LISA_STORE_KEY: "short-secret" })).toThrow(
      "LISA_STORE_KEY=(not shown): must be at least 32 bytes, e.g. from `openssl rand -hex 32`",
    );
    // Without a key of its own, a webhook secret too short to key the stored commands' MAC stops Lisa, named, not shown.
    const short = () => settingsFromEnv({ WEBHOOK_SECRET: "the-webhook-secret" });
    expect(short).toThrow(
      "WEBHOOK_SECRET=(not shown): is 18 bytes, and without LISA_STORE_KEY it is what Lisa signs the command rows it stores with, which takes at least 32; set LISA_STORE_KEY",
    );
    expect(short).not.toThrow("the-webhook-secret");
    expect(settingsFromEnv({ WEBHOOK_SECRET: "the-webhook-secret", LISA_STORE_KEY: "k".repeat(32) }).storeKey).toBe(
      "k".repeat(32),
    );
    expect(() => settingsFromEnv({ LISA_METRICS_ADDRESS: "http://0.0.0.0:9464" })).toThrow(
      'LISA_METRICS_ADDRESS="http://0.0.0.0:9464": must be a port or host:port, e.g. 9464 or 127.0.0.1:9464',
    );
    expect(() => settingsFromEnv({ LISA_CONCURRENCY: "0" })).toThrow('LISA_CONCURRENCY="0": must be at least 1');
    // A web or worker process alone on SQLite would store work nobody takes, or take none.
    expect(() => settingsFromEnv({ LISA_ROLE: "web" })).toThrow(
      'LISA_ROLE="web": web and worker processes share their work through PostgreSQL; set DATABASE_URL too',
    );
    expect(() => settingsFromEnv({ LISA_GEMINI_PRICES: "{gemini" })).toThrow('LISA_GEMINI_PRICES="{gemini": must be JSON');
    expect(() => settingsFromEnv({ LISA_GEMINI_PRICES: '["gemini-2.5-pro"]' })).toThrow(
      'LISA_GEMINI_PRICES="[\\"gemini-2.5-pro\\"]": must map model names to USD per million tokens',
    );
  });
});

describe("`npm start` with a bad environment", () => {
  it("exits at once with status 1 and one line per bad variable, before serving anything", () => {
    const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
    const result = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", main], {
      cwd: tempDir("bad-env"),
      env: { PATH: process.env.PATH, LISA_CONCURRENCY: "two", GHE_PROTOCOL: "" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      'Lisa cannot start; fix these environment variables:\nGHE_PROTOCOL="": must be https or http\nLISA_CONCURRENCY="two": must be a whole number of runs, e.g. 2\n',
    );
  });
});
