#!/usr/bin/env -S node --disable-warning=ExperimentalWarning
// The operator's command (`npx lisa …`): check a deployment and a configuration before labeling
// an issue. `npm start` runs the App itself.
import { configCheck } from "./config-check.ts";
import { doctor } from "./doctor.ts";
import { emulator } from "./emulator.ts";

const USAGE = `usage: lisa <command>

  doctor               check what a deployment needs, with a fix for each problem
  config check [path]  validate a .github/lisa.yml (default: .github/lisa.yml) as Lisa reads it
  emulator             a local GitHub (Enterprise Server layout) to try \`npm start\` against offline
`;

const [command, ...rest] = process.argv.slice(2);
let status: number;
if (command === "doctor") status = await doctor();
else if (command === "config" && rest[0] === "check") status = await configCheck(rest[1]);
else if (command === "emulator") status = await emulator(rest);
else {
  process.stdout.write(USAGE);
  status = command === undefined || command === "--help" || command === "help" ? 0 : 2;
}
process.exit(status);
