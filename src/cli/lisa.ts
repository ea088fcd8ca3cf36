#!/usr/bin/env -S node --disable-warning=ExperimentalWarning
// The operator's command (`npx lisa …`): check a deployment and a configuration before labeling
// an issue. `npm start` runs the App itself.
import { loadDotEnv } from "../config/load-dotenv.ts";
import { stopWhenOrphaned } from "../process/stop-when-orphaned.ts";
import { cacheCommand } from "./cache.ts";
import { configCheck } from "./config-check.ts";
import { doctor } from "./doctor/doctor.ts";
import { runIssue } from "./run-issue.ts";
import { status as workStatus } from "./status.ts";

const USAGE = `usage: lisa <command>

  doctor [--live]      check what a deployment needs, with a fix for each problem
                       (--live: also ask GitHub, as the App, for itself and its installations)
  config check [path]  validate a .github/lisa.yml (default: .github/lisa.yml) as Lisa reads it
  run owner/repo#N     one issue end to end from this terminal with your token (GITHUB_TOKEN), no App
  emulator             a local GitHub (Enterprise Server layout) to try \`npm start\` against offline
  all                  run Lisa as one process: webhooks, commands and runs (what \`npm start\` does)
  web                  answer webhooks and store them; runs nothing (needs DATABASE_URL)
  worker               handle stored commands and run runs, beside other workers (needs DATABASE_URL)
  status               queued and running work, by worker, from the store (DATABASE_URL or LISA_DATA_DIR),
                       and the set-up cache of this host
  cache clear [owner/repo]  empty the set-up cache of this host (LISA_DATA_DIR), or one repository's part
`;

// Every command sees the settings `npm start` sees, `.env` included.
loadDotEnv();
stopWhenOrphaned();
const [command, ...rest] = process.argv.slice(2);
let status: number;
if (command === "doctor") status = await doctor(rest);
else if (command === "config" && rest[0] === "check") status = await configCheck(rest[1]);
else if (command === "emulator") status = await runEmulator(rest);
else if (command === "run") status = await runIssue(rest);
else if (command === "status") status = await workStatus();
else if (command === "cache") status = await cacheCommand(rest);
else if (command === "all" || command === "web" || command === "worker") {
  // The App itself, in one role: main.ts reads it from the environment like every other setting.
  process.env.LISA_ROLE = command;
  await import("../main.ts");
  status = await new Promise<number>(() => {}); // main.ts runs until it exits the process
} else if (command === undefined || command === "--help" || command === "help") {
  process.stdout.write(USAGE);
  status = 0;
} else {
  const named = command === "config" ? `config ${rest[0] ?? ""}`.trim() : command;
  process.stderr.write(`lisa: unknown command '${named}'\n\n${USAGE}`);
  status = 2;
}
process.exit(status);

/**
 * The emulator is a development tool kept outside `src/`, so it is not in the image: it is found
 * at run time in a checkout, and its absence is said plainly instead of as a module error.
 */
async function runEmulator(args: string[]): Promise<number> {
  const cli = new URL("../../emulator/cli.ts", import.meta.url);
  let module: { emulator(args: string[]): Promise<number> };
  try {
    module = await import(cli.href);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw error;
    process.stderr.write("lisa emulator: the emulator ships with the source checkout, not with this installation.\n");
    return 2;
  }
  return module.emulator(args);
}
