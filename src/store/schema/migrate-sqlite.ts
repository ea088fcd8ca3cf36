import type { DatabaseSync } from "node:sqlite";
import { migrationsOf } from "./versions.ts";

/**
 * Brings a SQLite database up to the latest migration; `PRAGMA user_version` records how many have
 * run. A database written by an older Lisa runs the ones it lacks, each committing on its own with
 * its version, and keeps its data.
 */
export function migrate(db: DatabaseSync): void {
  const migrations = migrationsOf("sqlite");
  const current = Number((db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
  for (let version = current; version < migrations.length; version++) {
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(migrations[version] ?? "");
      db.exec(`PRAGMA user_version = ${version + 1}`);
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw new Error(`Lisa's database could not be migrated to version ${version + 1}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
