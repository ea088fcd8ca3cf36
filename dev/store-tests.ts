// Which test files choose their store by LISA_TEST_DATABASE_URL, so that `npm run test:postgres`
// runs those again on PostgreSQL and not the files whose run cannot change with it. During a run of
// `npm test`, every choice of a store (dev/test-database.ts) is noted for the test file it was made
// for, whichever process makes it: the test file's own, or a child (a Lisa process, a nested run)
// that inherits LISA_TEST_FILE from it. At the end of a run that was not interrupted, the files that ran, passed
// and made no choice are listed as store-free (test/support/store-tests-reporter.ts).

import { createHash } from "node:crypto";
import { appendFileSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** The checkout whose tests these are. */
export const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));

/** Where a running `npm test` notes the choices (its children inherit it). */
export const RECORD_VARIABLE = "LISA_TEST_STORE_RECORD";
/** The test file, relative to the checkout, that a process runs for. */
export const TEST_FILE_VARIABLE = "LISA_TEST_FILE";
/** Noted for a choice no test file can be named for: then no file may be left out. */
export const UNKNOWN_TEST_FILE = "?";

export const StoreTestsList = z.object({
  /** When the run that wrote the list started (ms since the epoch): a file changed since may choose differently. */
  startedAt: z.number(),
  /** Test files that ran, passed and chose no store, relative to the checkout. */
  storeFree: z.array(z.string()),
  /** Test files that chose their store by LISA_TEST_DATABASE_URL. */
  store: z.array(z.string()),
});
export type StoreTestsList = z.infer<typeof StoreTestsList>;

/** The list of this checkout: in the temp directory, as node_modules may be shared by several checkouts. */
export function storeTestsListPath(): string {
  const key = createHash("sha256").update(CHECKOUT).digest("hex").slice(0, 16);
  return process.env.LISA_TEST_STORE_LIST ?? path.join(tmpdir(), `lisa-store-tests-${key}.json`);
}

const noted = new Set<string>();

/** Notes, when `npm test` records, that the current test file chose its store by LISA_TEST_DATABASE_URL. */
export function noteStoreChoice(): void {
  const record = process.env[RECORD_VARIABLE];
  if (!record) return;
  const file = process.env[TEST_FILE_VARIABLE] || UNKNOWN_TEST_FILE;
  if (noted.has(file)) return;
  noted.add(file);
  // One short line per append: whole even when several processes note at once.
  appendFileSync(record, `${file}\n`);
}

/** The test files noted in a record. */
export function notedFiles(record: string): Set<string> {
  return new Set(readFileSync(record, "utf8").split("\n").filter(Boolean));
}

/** A file of the checkout (not node_modules nor dot folders) changed after `time`, if any. */
export function changedSince(time: number, dir = CHECKOUT): string | undefined {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const inside = changedSince(time, full);
      if (inside) return inside;
    } else if (entry.isFile() && statSync(full).mtimeMs > time) {
      return path.relative(CHECKOUT, full);
    }
  }
  return undefined;
}

/**
 * The test files the PostgreSQL pass may leave out, from the list of the last `npm test`; none when
 * there is no usable list. Says on `log` which it is and why.
 */
export function storeFreeTests(log: (line: string) => void, listPath = storeTestsListPath()): string[] {
  let list: StoreTestsList;
  try {
    list = StoreTestsList.parse(JSON.parse(readFileSync(listPath, "utf8")));
  } catch {
    log(
      `the whole suite: no list of the test files that choose their store at ${listPath} (an npm test that runs to its end writes it)`,
    );
    return [];
  }
  const changed = changedSince(list.startedAt);
  if (changed) {
    log(`the whole suite: ${changed} changed after the npm test that listed the test files choosing their store`);
    return [];
  }
  log(
    `the ${list.store.length} test files npm test saw choose their store by LISA_TEST_DATABASE_URL, and any it did not run; ` +
      `not the ${list.storeFree.length} it saw pass without choosing one (${listPath})`,
  );
  return list.storeFree;
}
