import { Probot, run } from "probot";
import { createLisa, type Lisa } from "./app.ts";
import { appCredentials, unquotedPrivateKey } from "./config/app-key.ts";
import { EnvError, type LisaSettings, settingsFromEnv } from "./config/env-schema.ts";
import { loadDotEnv } from "./config/load-dotenv.ts";
import { LisaOctokit } from "./github/lisa-octokit.ts";
import { type LisaServer, serveLisa } from "./http/serve-lisa.ts";
import { killAllAgents } from "./providers/run-agent.ts";

// Before anything reads it (the settings, the App's key, the secrets Lisa redacts).
loadDotEnv();
if (process.env.PRIVATE_KEY) process.env.PRIVATE_KEY = unquotedPrivateKey(process.env.PRIVATE_KEY);

let settings: LisaSettings;
let credentials: ReturnType<typeof appCredentials>;
try {
  settings = settingsFromEnv(process.env);
  credentials = appCredentials(process.env);
} catch (error) {
  if (!(error instanceof EnvError)) throw error;
  // Before anything starts: a bad variable must stop Lisa at once, not leave a worker that never runs.
  process.stderr.write(`Lisa cannot start; fix these environment variables:\n${error.message}\n`);
  process.exit(1);
}

/** Exit status of a worker that lost a claim (EX_SOFTWARE): not a crash to hide, nor a clean stop. */
const EXIT_CLAIM_LOST = 70;

if (!credentials) {
  // No App yet: Probot's own server walks the operator through registering one (GitHub's manifest
  // flow) and writes its credentials to .env; Lisa starts at the next `npm start`. In production
  // Probot refuses instead, naming the missing variable.
  await run(() => undefined);
} else {
  const probot = new Probot({
    ...credentials,
    secret: process.env.WEBHOOK_SECRET,
    baseUrl: settings.apiBaseUrl,
    Octokit: LisaOctokit,
    logLevel: settings.log.level,
    logFormat: settings.log.format,
  });
  let lisa: Lisa | undefined;
  let server: LisaServer;
  try {
    server = await serveLisa(
      async (app, { addHandler }) => {
        lisa = createLisa(app, {
          ...settings,
          appId: credentials.appId,
          // A worker whose claim lapsed (it froze past its lease) may be running a run another worker
          // now resumes: it stops at once, agents and all, and its supervisor starts it afresh.
          onClaimLost: () => {
            killAllAgents();
            process.exit(EXIT_CLAIM_LOST);
          },
        });
        await lisa.start();
        addHandler(lisa.httpHandler);
      },
      { probot, ...settings.http },
    );
    // Listening now: webhooks GitHub could not deliver while no Lisa answered can come again.
    (lisa as Lisa | undefined)?.redeliverMissed();
  } catch (error) {
    // The port is taken, the smee.io channel cannot be reached, or Probot could not start its logger.
    process.stderr.write(`Lisa cannot start: ${(error as Error).message}\n`);
    killAllAgents();
    process.exit(1);
  }
  // A deploy: runs under way get the grace period while webhooks are still stored, the rest resume at
  // the next start; nothing is left running (agents run in their own process groups and would outlive Lisa).
  const shutdown = () => {
    (lisa as Lisa)
      .shutdown(settings.shutdownGraceMs, () => server.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          probot.log.error({ err: error }, "could not shut down cleanly");
          killAllAgents();
          process.exit(1);
        },
      );
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}
