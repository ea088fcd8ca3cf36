import type { Database } from "./database.ts";
import type { RepoConfigRow } from "./rows.ts";
import { sql } from "./sql.ts";

/** The config files workers last read, so the next read is conditional (config-cache.ts). */
export class ConfigFileRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** The config file a worker last read at `path` of a repository, if any. */
  async get(installationId: number, owner: string, repo: string, path: string): Promise<RepoConfigRow | undefined> {
    return this.#db.get(
      sql`SELECT * FROM repo_configs WHERE installation_id = ${installationId} AND owner = ${owner.toLowerCase()} AND repo = ${repo.toLowerCase()} AND path = ${path}`,
    );
  }

  /** Records a read of a config file, replacing the one before. */
  async save(row: Omit<RepoConfigRow, "id">): Promise<void> {
    await this.#db.run(sql`INSERT INTO repo_configs (installation_id, owner, repo, path, etag, content, label, validated_at)
       VALUES (${row.installation_id}, ${row.owner.toLowerCase()}, ${row.repo.toLowerCase()}, ${row.path}, ${row.etag}, ${row.content}, ${row.label}, ${row.validated_at})
       ON CONFLICT (installation_id, owner, repo, path) DO UPDATE SET etag = excluded.etag,
         content = excluded.content, label = excluded.label, validated_at = excluded.validated_at`);
  }
}
