import type pg from "pg";
import { migrationsOf } from "./versions.ts";

/**
 * Brings a PostgreSQL schema up to the latest migration, recorded in `lisa_schema`: one transaction
 * each, under the schema's own lock, so workers starting together migrate once.
 */
export async function migratePostgres(client: pg.ClientBase, writeLock: string): Promise<void> {
  const migrations = migrationsOf("postgres");
  for (;;) {
    await client.query(`BEGIN; SELECT ${writeLock}; CREATE TABLE IF NOT EXISTS lisa_schema (version INTEGER NOT NULL)`);
    const { rows } = await client.query<{ version: number }>("SELECT version FROM lisa_schema");
    const current = rows[0]?.version ?? 0;
    const version = current + 1;
    const migration = migrations[current];
    if (migration === undefined) {
      await client.query("COMMIT");
      return;
    }
    try {
      await client.query(migration);
      await client.query(
        current === 0 ? `INSERT INTO lisa_schema VALUES (${version})` : `UPDATE lisa_schema SET version = ${version}`,
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK");
      throw new Error(`Lisa's PostgreSQL schema could not be migrated to version ${version}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
