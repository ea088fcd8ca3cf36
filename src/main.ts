import path from "node:path";
import { run } from "probot";
import { createLisa } from "./app.ts";
import type { ProviderName } from "./config/config-schema.ts";
import { limitRequestBodies } from "./http/body-limit.ts";
import { providers } from "./providers/registry.ts";
import { killAllAgents } from "./providers/run-agent.ts";
import { sandboxSettingsFromEnv } from "./sandbox/sandbox-settings.ts";

/** GHES: git lives on the same host as the API. */
function defaultGitBaseUrl(): string {
  const host = process.env.GHE_HOST;
  return host ? `${process.env.GHE_PROTOCOL ?? "https"}://${host}` : "https://github.com";
}

/** `LISA_<PROVIDER>_PATH`, e.g. `LISA_CLAUDE_PATH`, for CLIs that are not on PATH under their usual names. */
function agentBinariesFromEnv(): Partial<Record<ProviderName, string>> {
  const binaries: Partial<Record<ProviderName, string>> = {};
  for (const name of Object.keys(providers) as ProviderName[]) {
    const value = process.env[`LISA_${name.toUpperCase()}_PATH`];
    if (value) binaries[name] = value;
  }
  return binaries;
}

// Before Probot's server exists: its listener reads whole bodies to check their signature.
limitRequestBodies();

await run(async (app) => {
  const lisa = createLisa(app, {
    dataDir: path.resolve(process.env.LISA_DATA_DIR ?? "data"),
    gitBaseUrl: process.env.LISA_GIT_BASE_URL ?? defaultGitBaseUrl(),
    agentBinaries: agentBinariesFromEnv(),
    concurrency: Number(process.env.LISA_CONCURRENCY ?? 2),
    sandbox: sandboxSettingsFromEnv(process.env),
  });
  await lisa.start();
  // Runs under way are resumed on the next start; agents run in their own process groups and must not outlive Lisa.
  const shutdown = () => {
    killAllAgents();
    process.exit(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
});
