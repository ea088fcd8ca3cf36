// Which migration each dialect runs at which version: its frozen history, then the shared list. The
// numbers are the ones on disk (SQLite's user_version, PostgreSQL's lisa_schema.version).

import { type Dialect, WORDS } from "./dialect.ts";
import { POSTGRES_HISTORY } from "./postgres-history.ts";
import { SHARED_MIGRATIONS } from "./shared-migrations.ts";
import { SQLITE_HISTORY } from "./sqlite-history.ts";

/** The version each dialect had reached when they converged: shared migration k (from 1) is its version CONVERGED_AT + k. */
export const CONVERGED_AT: Readonly<Record<Dialect, number>> = { sqlite: 6, postgres: 1 };

const HISTORY: Readonly<Record<Dialect, readonly string[]>> = { sqlite: SQLITE_HISTORY, postgres: POSTGRES_HISTORY };

/** A dialect's migrations in version order: entry v - 1 takes a database from version v - 1 to v. */
export function migrationsOf(dialect: Dialect): readonly string[] {
  const history = HISTORY[dialect];
  // A migration added to a frozen history would give every shared one another version on disk.
  if (history.length !== CONVERGED_AT[dialect])
    throw new Error(`${dialect}'s frozen history has ${history.length} migrations, not ${CONVERGED_AT[dialect]}`);
  return [...history, ...SHARED_MIGRATIONS.map((migration) => migration(WORDS[dialect]))];
}
