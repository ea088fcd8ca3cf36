import { run } from "probot";
import { createLisa } from "./app.ts";
import { EnvError, type LisaSettings, settingsFromEnv } from "./config/env-schema.ts";
import { limitRequestBodies } from "./http/body-limit.ts";
import { killAllAgents } from "./providers/run-agent.ts";

let settings: LisaSettings;
try {
  settings = settingsFromEnv(process.env);
} catch (error) {
  if (!(error instanceof EnvError)) throw error;
  // Before Probot starts: a bad variable must stop Lisa at once, not leave a worker that never runs.
  process.stderr.write(`Lisa cannot start; fix these environment variables:\n${error.message}\n`);
  process.exit(1);
}

// Before Probot's server exists: its listener reads whole bodies to check their signature.
limitRequestBodies();

await run(async (app) => {
  const lisa = createLisa(app, settings);
  await lisa.start();
  // Runs under way are resumed on the next start; agents run in their own process groups and must not outlive Lisa.
  const shutdown = () => {
    killAllAgents();
    process.exit(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
});
