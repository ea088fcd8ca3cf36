import { existsSync } from "node:fs";
import path from "node:path";
import { formatWorkStatus, workStatus } from "../scheduler/work-status.ts";
import { Store } from "../store/store.ts";
import { describeSetupCache } from "./cache.ts";

/** `lisa status`: what is queued and what each worker runs, read from the store every process shares. */
export async function status(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const location = env.DATABASE_URL || path.join(path.resolve(env.LISA_DATA_DIR || "data"), "lisa.db");
  // Opening a store creates it: in the wrong folder that would be an empty one, reported as no work.
  if (!env.DATABASE_URL && !existsSync(location)) {
    process.stderr.write(
      `lisa status: no store at ${location}; run it where Lisa runs, or set LISA_DATA_DIR or DATABASE_URL as Lisa has them\n`,
    );
    return 1;
  }
  let store: Store;
  try {
    store = new Store(location);
  } catch (error) {
    process.stderr.write(`lisa status: cannot open the store (${(error as Error).message})\n`);
    return 1;
  }
  try {
    process.stdout.write(`${formatWorkStatus(await workStatus(store, Date.now()))}\n${await describeSetupCache(env)}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
