// A worker that queues command 1, takes it and never finishes it, for a test to SIGKILL while it
// holds it: `node test/support/command-holder.ts <database url>` prints "holding 1" then.
import { BossClaims } from "../../src/scheduler/boss-claims.ts";
import { BossCommandQueue } from "../../src/scheduler/boss-commands.ts";
import { splitSchema } from "../../src/store/postgres-driver.ts";

const url = process.argv[2] ?? "";
const log = { info: () => {}, warn: () => {}, error: () => {} };
const claims = new BossClaims({ databaseUrl: url, leaseSeconds: 30, concurrency: 1, claims: true, onLost: async () => {}, log });
await claims.start();
const queue = new BossCommandQueue({ boss: () => claims.boss, schema: splitSchema(url).schema, concurrency: 1, retryMs: 0, log });
await queue.start();
await queue.work((id) => {
  console.log(`holding ${id}`);
  return new Promise(() => {});
});
queue.enqueue(1, async () => "acme/api#1");
