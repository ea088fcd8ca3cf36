import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { requirePostgres } from "../../dev/test-postgres.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";

// SQLite's early migrations and PostgreSQL's first were written apart (src/store/schema/*-history.ts),
// and the shared ones since come out in two dialects; this holds the results to one schema: every
// column's type, nullability and default, every uniqueness rule (partial ones by their predicate),
// and the name of every other index, but for the indexes PostgreSQL alone has, each said why.

/** Indexes only PostgreSQL has: its planner wants them where SQLite's scans of small tables do not. */
const POSTGRES_ONLY_INDEXES = new Set([
  "runs_by_state", // claims and convergence across the fleet's runs
  "sessions_by_step",
]);

const TYPES: Record<string, string> = {
  integer: "integer",
  bigint: "integer",
  text: "text",
  real: "real",
  "double precision": "real",
};
const type = (name: string) => TYPES[name.toLowerCase()] ?? `unknown ${name}`;

/** A default as both write it: `'pending'` and `'pending'::text` are the same. */
const defaultOf = (value: string | null) => (value === null ? "none" : value.replace(/::[a-z ]+$/, "").replace(/^'(.*)'$/, "$1"));

/**
 * A partial index's predicate in one dialect: PostgreSQL prints `state NOT IN ('a', 'b')` back as
 * `(state <> ALL (ARRAY['a'::text, 'b'::text]))`, and wraps every predicate in parentheses.
 */
export function predicateOf(sql: string): string {
  return sql
    .toLowerCase()
    .replace(/::text/g, "")
    .replace(/<> all \(array\[(.*?)\]\)/g, "not in ($1)")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^\((.*)\)$/, "$1");
}

interface Shape {
  columns: string[];
  unique: string[];
  indexes: string[];
}

function sqliteShape(file: string): Shape {
  const db = new DatabaseSync(file);
  const shape: Shape = { columns: [], unique: [], indexes: [] };
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  for (const { name: table } of tables) {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as {
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      pk: number;
    }[];
    for (const c of columns)
      shape.columns.push(
        `${table}.${c.name} ${type(c.type)} ${c.notnull || c.pk ? "not null" : "null"} ${defaultOf(c.dflt_value)}`,
      );
    const indexes = db.prepare(`PRAGMA index_list(${table})`).all() as {
      name: string;
      unique: number;
      origin: string;
      partial: number;
    }[];
    for (const index of indexes) {
      if (index.origin === "pk") continue;
      const keys = (db.prepare(`PRAGMA index_info(${index.name})`).all() as { name: string }[]).map((k) => k.name).join(", ");
      const sql = (
        db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(index.name) as { sql: string | null } | undefined
      )?.sql;
      const where = index.partial && sql ? ` where ${predicateOf(sql.slice(sql.toLowerCase().lastIndexOf(" where ") + 7))}` : "";
      if (index.unique) shape.unique.push(`${table} (${keys})${where}`);
      else shape.indexes.push(index.name);
    }
  }
  db.close();
  return shape;
}

async function postgresShape(client: pg.Client, schema: string): Promise<Shape> {
  const shape: Shape = { columns: [], unique: [], indexes: [] };
  const columns = await client.query<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
  }>(
    "SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = $1 AND table_name <> 'lisa_schema'",
    [schema],
  );
  for (const c of columns.rows) {
    // An identity column's sequence is PostgreSQL's spelling of SQLite's INTEGER PRIMARY KEY.
    const value = c.column_default?.startsWith("nextval(") ? null : c.column_default;
    shape.columns.push(
      `${c.table_name}.${c.column_name} ${type(c.data_type)} ${c.is_nullable === "NO" ? "not null" : "null"} ${defaultOf(value)}`,
    );
  }
  const indexes = await client.query<{ tablename: string; indexname: string; indexdef: string }>(
    "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename <> 'lisa_schema'",
    [schema],
  );
  for (const index of indexes.rows) {
    if (index.indexname.endsWith("_pkey")) continue;
    const [, quoted = "", where] = /\(([^)]*)\)(?: WHERE (.*))?$/.exec(index.indexdef) ?? [];
    // PostgreSQL quotes a key that is a keyword (`"position"`).
    const keys = quoted.replace(/"/g, "");
    if (index.indexdef.startsWith("CREATE UNIQUE"))
      shape.unique.push(`${index.tablename} (${keys})${where ? ` where ${predicateOf(where)}` : ""}`);
    else if (!POSTGRES_ONLY_INDEXES.has(index.indexname)) shape.indexes.push(index.indexname);
  }
  return shape;
}

const sorted = (shape: Shape): Shape => ({
  columns: [...shape.columns].sort(),
  unique: [...shape.unique].sort(),
  indexes: [...shape.indexes].sort(),
});

describe("the schema SQLite's migrations give and PostgreSQL's", () => {
  it("reads a predicate the same in both dialects", () => {
    expect(predicateOf("(state <> ALL (ARRAY['merged'::text, 'closed'::text]))")).toBe("state not in ('merged', 'closed')");
    expect(predicateOf("state NOT IN ('merged', 'closed')")).toBe("state not in ('merged', 'closed')");
    expect(predicateOf("(event_key IS NOT NULL)")).toBe("event_key is not null");
  });

  it("are one schema: columns with their types, nullability and defaults, uniqueness rules with their predicates, indexes", async () => {
    const file = path.join(tempDir("conformance"), "lisa.db");
    await new Store(file).close();
    const lite = sorted(sqliteShape(file));

    const base = await requirePostgres();
    const schema = `shape_${process.pid}_${Date.now().toString(36)}`;
    const url = new URL(base);
    url.searchParams.set("schema", schema);
    await new Store(url.toString()).close();
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      const post = sorted(await postgresShape(client, schema));
      expect(post.columns).toEqual(lite.columns);
      expect(post.unique).toEqual(lite.unique);
      expect(post.indexes).toEqual(lite.indexes);
      // Not vacuous: every table's columns were read, and the rules that keep runs and commands single.
      expect(lite.columns.length).toBeGreaterThan(100);
      expect(lite.unique).toContain("runs (owner, repo, issue_number) where state not in ('merged', 'closed')");
      expect(lite.unique).toContain("commands (event_key) where event_key is not null");
    } finally {
      await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await client.end();
    }
  });
});
