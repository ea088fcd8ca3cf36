import { run } from "probot";
import { createLisa } from "./app.ts";
import { unquotedPrivateKey } from "./config/app-key.ts";
import { EnvError, type LisaSettings, settingsFromEnv } from "./config/env-schema.ts";
import { loadDotEnv } from "./config/load-dotenv.ts";
import { LisaOctokit } from "./github/lisa-octokit.ts";
import { limitRequestBodies } from "./http/body-limit.ts";
import { killAllAgents } from "./providers/run-agent.ts";

// Before anything reads it (the settings, Probot, the secrets Lisa redacts).
loadDotEnv();
if (process.env.PRIVATE_KEY) process.env.PRIVATE_KEY = unquotedPrivateKey(process.env.PRIVATE_KEY);

let settings: LisaSettings;
try {
  settings = settingsFromEnv(process.env);
} catch (error) {
  if (!(error instanceof EnvError)) throw error;
  // Before Probot starts: a bad variable must stop Lisa at once, not leave a worker that never runs.
  process.stderr.write(`Lisa cannot start; fix these environment variables:\n${error.message}\n`);
  process.exit(1);
}

/** Exit status of a worker that lost a claim (EX_SOFTWARE): not a crash to hide, nor a clean stop. */
const EXIT_CLAIM_LOST = 70;

// Before Probot's server exists: its listener reads whole bodies to check their signature.
limitRequestBodies();

await run(
  async (app, { addHandler }) => {
    const lisa = createLisa(app, {
      ...settings,
      // A worker whose claim lapsed (it froze past its lease) may be running a run another worker
      // now resumes: it stops at once, agents and all, and its supervisor starts it afresh.
      onClaimLost: () => {
        killAllAgents();
        process.exit(EXIT_CLAIM_LOST);
      },
    });
    await lisa.start();
    addHandler(lisa.httpHandler);
    // A deploy: runs under way get the grace period, the rest resume at the next start; nothing is
    // left running (agents run in their own process groups and would outlive Lisa).
    const shutdown = () => {
      lisa.shutdown(settings.shutdownGraceMs).then(
        () => process.exit(0),
        (error: unknown) => {
          app.log.error({ err: error }, "could not shut down cleanly");
          killAllAgents();
          process.exit(1);
        },
      );
    };
    process.once("SIGTERM", shutdown);
    process.once("SIGINT", shutdown);
  },
  { Octokit: LisaOctokit },
);
