// `npm run validate-requests -- <folder>`: every REST request a test run sent to the GitHub
// emulator (recorded with LISA_RECORD_REQUESTS=<folder>; `npm run check` does this for its SQLite
// pass) held to GitHub's API descriptions for api.github.com and GHES 3.17–3.19: each request must
// be an operation GitHub has, with only the body fields it takes, of their types. Prints the count
// per description and each distinct problem; exits 1 when there is one.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { API_DESCRIPTIONS, openApiChecker } from "../dev/openapi-check.ts";
import type { RecordedExchange } from "../emulator/request-record.ts";

const folder = process.argv[2];
if (!folder) {
  process.stderr.write("usage: validate-requests <folder of requests-*.jsonl>\n");
  process.exit(2);
}

const exchanges: RecordedExchange[] = readdirSync(folder)
  .filter((name) => name.endsWith(".jsonl"))
  .flatMap((name) =>
    readFileSync(path.join(folder, name), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as RecordedExchange),
  );
// A route the emulator does not have was answered 404 by it, as GitHub would: a test asking for
// it on purpose, not a request the emulator took. Distinct requests are checked once each.
const distinct = new Map<string, { exchange: RecordedExchange; times: number }>();
for (const exchange of exchanges) {
  if (exchange.route === null) continue;
  const key = `${exchange.method} ${exchange.route} ${JSON.stringify(exchange.sent)}`;
  const seen = distinct.get(key);
  if (seen) seen.times++;
  else distinct.set(key, { exchange, times: 1 });
}
if (distinct.size === 0) {
  process.stderr.write(`no recorded requests in ${folder}: was LISA_RECORD_REQUESTS set for the run?\n`);
  process.exit(1);
}

const routed = [...distinct.values()].reduce((sum, { times }) => sum + times, 0);
const operations = new Set([...distinct.values()].map(({ exchange }) => `${exchange.method} ${exchange.route}`));
process.stdout.write(
  `${routed} recorded requests (${distinct.size} distinct, ${operations.size} operations) against GitHub's API descriptions:\n`,
);
let failed = false;
for (const name of API_DESCRIPTIONS) {
  const checker = openApiChecker(name);
  const problems = new Set<string>();
  let valid = 0;
  for (const { exchange, times } of distinct.values()) {
    const found = checker.requestProblems(exchange.method, exchange.route ?? "", exchange.sent);
    if (found.length === 0) valid += times;
    for (const problem of found) problems.add(problem);
  }
  process.stdout.write(`  ${name.padEnd(15)} ${valid} of ${routed} valid · ${problems.size} distinct problems\n`);
  for (const problem of [...problems].sort()) process.stdout.write(`    ${problem}\n`);
  if (problems.size > 0) failed = true;
}
process.exit(failed ? 1 : 0);
