import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { requirePostgres } from "../../dev/test-postgres.ts";
import { POSTGRES_HISTORY } from "../../src/store/schema/postgres-history.ts";
import { migrationsOf } from "../../src/store/schema/versions.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

const T0 = Date.UTC(2026, 0, 1);

/**
 * A database as the first release left it: its schema (migration 1, which is that release's schema
 * verbatim), no `user_version`, and these runs:
 * 1. issue 10, waiting for review (finished, as that release thought), one step delivered with PR #5;
 * 2. issue 11, failed at its step;
 * 3. issue 12, failed, then labeled again:
 * 4. issue 12, queued;
 * 5. issue 13, two repositories, failed while planning (no plan, the planning step failed);
 * 6. issue 14, two repositories, failed at step 2 after step 1 delivered PR #8.
 */
function firstReleaseDatabase(): string {
  const file = path.join(tempDir("v1"), "lisa.db");
  const db = new DatabaseSync(file);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;");
  db.exec(migrationsOf("sqlite")[0] ?? "");
  const run = db.prepare(
    `INSERT INTO runs (id, installation_id, owner, repo, issue_number, issue_title, issue_body, requested_by, config, plan, state, comment_id, error, created_at, updated_at, finished_at)
     VALUES (?, 2, 'acme', 'api', ?, 'Title', 'Body', 'alice', '{"label":"lisa"}', ?, ?, 900, ?, ?, ?, ?)`,
  );
  run.run(1, 10, null, "review", null, T0, T0 + 5, T0 + 5);
  run.run(2, 11, null, "failed", "Step failed: gates red", T0 + 10, T0 + 15, T0 + 15);
  run.run(3, 12, null, "failed", "git push failed", T0 + 20, T0 + 25, T0 + 25);
  run.run(4, 12, null, "queued", null, T0 + 30, T0 + 30, null);
  run.run(5, 13, null, "failed", "Planning failed: no plan", T0 + 40, T0 + 45, T0 + 45);
  run.run(6, 14, '{"steps":[{"repo":"acme/api"},{"repo":"acme/web"}]}', "failed", "Step 2 failed", T0 + 50, T0 + 55, T0 + 55);
  const step = db.prepare(
    `INSERT INTO steps (id, run_id, position, owner, repo, base_branch, branch, scope, state, phase, start_sha, gates, summary, pr_number, pr_url, created_at, updated_at)
     VALUES (?, ?, ?, 'acme', ?, 'main', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  step.run(
    1,
    1,
    1,
    "api",
    "lisa/10-title",
    null,
    "delivered",
    "done",
    "aaa111",
    '[{"command":"npm test","passed":true}]',
    "Did it",
    5,
    "https://github.com/acme/api/pull/5",
    T0,
    T0 + 5,
  );
  step.run(2, 2, 1, "api", "lisa/11-title", null, "failed", "gates", "bbb222", null, null, null, null, T0 + 10, T0 + 15);
  step.run(3, 3, 1, "api", "lisa/12-title", null, "failed", "push", null, null, null, null, null, T0 + 20, T0 + 25);
  step.run(4, 4, 1, "api", "lisa/12-title", null, "pending", "workspace", null, null, null, null, null, T0 + 30, T0 + 30);
  step.run(5, 5, 0, "api", "", null, "failed", "planning", null, null, null, null, null, T0 + 40, T0 + 45);
  step.run(6, 6, 0, "api", "", null, "delivered", "done", null, null, null, null, null, T0 + 50, T0 + 51);
  step.run(
    7,
    6,
    1,
    "api",
    "lisa/14-title",
    "add the endpoint",
    "delivered",
    "done",
    "ccc333",
    null,
    null,
    8,
    "https://github.com/acme/api/pull/8",
    T0 + 51,
    T0 + 52,
  );
  step.run(8, 6, 2, "web", "lisa/14-title", "call it", "failed", "agent", "ddd444", null, null, null, null, T0 + 52, T0 + 55);
  db.prepare(
    "INSERT INTO sessions (step_id, iteration, purpose, provider, model, state, cost_usd, turns, started_at, finished_at) VALUES (1, 1, 'implement', 'claude', NULL, 'succeeded', 0.5, 3, ?, ?)",
  ).run(T0 + 1, T0 + 4);
  db.close();
  return file;
}

const userVersion = (file: string) => {
  const db = new DatabaseSync(file);
  try {
    return (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
  } finally {
    db.close();
  }
};

describe("migrate", () => {
  it("numbers the migrations: the first release's schema, review gates, when a command was answered, who a session's process is, command retries, the worker of a run, an owed tracking edit, a command row's MAC, the last state change GitHub shows, an installation's write slots, the config files workers read, a run's reflections and anchors, a step's CI failure to fix, a run's memory pull requests, the webhook deliveries asked for again, each write slot's lane and whether it went out, a command's priority and issue, the pending commands by id", () => {
    expect(migrationsOf("sqlite")).toHaveLength(18);
  });

  it("opens a database of the first release and brings it to user_version 18", async () => {
    const file = firstReleaseDatabase();
    expect(userVersion(file)).toBe(0);
    await new Store(file).close();
    expect(userVersion(file)).toBe(18);
  });

  it("keeps every run, and closes the older run of an issue that has a newer one", async () => {
    const store = new Store(firstReleaseDatabase());
    expect(
      (await store.runs.inState("queued", "running", "review", "failed", "closed")).map((r) => [r.id, r.issue_number, r.state]),
    ).toEqual([
      [1, 10, "review"],
      [2, 11, "failed"],
      [3, 12, "closed"],
      [4, 12, "queued"],
      [5, 13, "failed"],
      [6, 14, "failed"],
    ]);
    expect(await store.runs.get(2)).toMatchObject({ error: "Step failed: gates red", comment_id: 900, current_pass: 1 });
    await store.close();
  });

  it("counts the runs of an older release as shown on GitHub: none is published again on upgrade", async () => {
    const store = new Store(firstReleaseDatabase());
    expect(await store.runs.behindOnGitHub()).toEqual([]);
    await store.close();
  });

  it("keeps a run that waits for review open: it is no longer finished", async () => {
    const store = new Store(firstReleaseDatabase());
    expect(await store.runs.get(1)).toMatchObject({ state: "review", finished_at: null, report_comment_id: null });
    await store.close();
  });

  it("gives every run its first pass, in the state the run stood", async () => {
    const store = new Store(firstReleaseDatabase());
    const firstPasses = await Promise.all([1, 2, 3, 4, 5, 6].map((id) => store.passes.current(id)));
    expect(firstPasses.map((p) => [p?.run_id, p?.number, p?.trigger, p?.requested_by, p?.state])).toEqual([
      [1, 1, "initial", "alice", "at_gate"],
      [2, 1, "initial", "alice", "building"],
      [3, 1, "initial", "alice", "building"],
      [4, 1, "initial", "alice", "queued"],
      [5, 1, "initial", "alice", "planning"],
      [6, 1, "initial", "alice", "building"],
    ]);
    expect(await store.passes.current(1)).toMatchObject({ config: { label: "lisa" }, started_at: T0, finished_at: null });
    expect((await store.passes.current(6))?.plan).toBe('{"steps":[{"repo":"acme/api"},{"repo":"acme/web"}]}');
    await store.close();
  });

  it("marks steps with a pull request open and records them in pass 1", async () => {
    const store = new Store(firstReleaseDatabase());
    expect(await store.steps.of(1)).toEqual([
      expect.objectContaining({ id: 1, state: "delivered", pr_number: 5, pr_state: "open", pass: 1, draft: 0, head_sha: null }),
    ]);
    expect((await store.steps.of(2))[0]).toMatchObject({ pr_number: null, pr_state: null });
    const pass = await store.passes.current(1);
    expect(await store.steps.inPass(1, pass?.id ?? 0)).toMatchObject({
      state: "delivered",
      start_sha: "aaa111",
      gates: [{ command: "npm test", passed: true }],
      summary: "Did it",
    });
    expect((await store.steps.history(7)).map((r) => [r.number, r.state])).toEqual([[1, "delivered"]]);
    await store.close();
  });

  it("records each repository step in pass 1, and never the planning step", async () => {
    const store = new Store(firstReleaseDatabase());
    expect(
      (await store.steps.allInPass((await store.passes.current(6))?.id ?? 0)).map((r) => [r.step_id, r.state, r.scope]),
    ).toEqual([
      [7, "delivered", "add the endpoint"],
      [8, "failed", "call it"],
    ]);
    expect(await store.steps.allInPass((await store.passes.current(5))?.id ?? 0)).toEqual([]);
    await store.close();
  });

  it("keeps sessions and their cost, as sessions of pass 1", async () => {
    const store = new Store(firstReleaseDatabase());
    expect(await store.sessions.of(1)).toEqual([expect.objectContaining({ pass: 1, cost_usd: 0.5, state: "succeeded" })]);
    expect(await store.runs.cost(1, 1)).toBe(0.5);
    await store.close();
  });

  it("allows one open run per issue, now including runs that wait for review or failed", async () => {
    const store = new Store(firstReleaseDatabase());
    expect(await store.runs.create(newRun(10), oneStep(10))).toBeUndefined();
    expect(await store.runs.create(newRun(11), oneStep(11))).toBeUndefined();
    expect(await store.runs.create(newRun(12), oneStep(12))).toBeUndefined();
    expect((await store.runs.create(newRun(15), oneStep(15)))?.id).toBe(7);
    await store.close();
  });

  it("resumes a failed plan by planning again: /lisa retry of run 5 re-runs its planning step", async () => {
    const store = new Store(firstReleaseDatabase());
    expect((await store.runs.retry(5, {}, "alice"))?.state).toBe("queued");
    expect((await store.passes.current(5))?.state).toBe("planning");
    expect(await store.steps.of(5)).toEqual([expect.objectContaining({ position: 0, state: "pending", phase: "planning" })]);
    await store.close();
  });

  it("is a no-op when the database is opened again", async () => {
    const file = firstReleaseDatabase();
    await new Store(file).close();
    const snapshot = (store: Store) =>
      Promise.all(
        [1, 2, 3, 4, 5, 6].map(async (id) => {
          const passes = await store.passes.of(id);
          return {
            run: await store.runs.get(id),
            passes,
            steps: await store.steps.of(id),
            stepPasses: (await Promise.all(passes.map((p) => store.steps.allInPass(p.id)))).flat(),
          };
        }),
      );
    const first = new Store(file);
    const before = await snapshot(first);
    await first.close();
    const again = new Store(file);
    expect(await snapshot(again)).toEqual(before);
    expect(before[0]?.passes.length).toBeGreaterThan(0);
    await again.close();
    expect(userVersion(file)).toBe(18);
  });

  it("creates a fresh database at the latest version", async () => {
    const file = path.join(tempDir("fresh"), "lisa.db");
    await new Store(file).close();
    expect(userVersion(file)).toBe(18);
  });
});

describe("migratePostgres", () => {
  it("gives PostgreSQL the tables and columns SQLite's migrations give, and runs again as a no-op", async () => {
    const sqliteFile = path.join(tempDir("shape"), "lisa.db");
    await new Store(sqliteFile).close();
    const sqlite = new DatabaseSync(sqliteFile);
    const sqliteShape: Record<string, string[]> = {};
    for (const { name } of sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]) {
      sqliteShape[name] = (sqlite.prepare(`PRAGMA table_info(${name})`).all() as { name: string }[]).map((c) => c.name).sort();
    }
    sqlite.close();

    const schema = `shape_${Date.now().toString(36)}`;
    const base = await requirePostgres();
    const url = new URL(base);
    url.searchParams.set("schema", schema);
    await new Store(url.toString()).close();
    await new Store(url.toString()).close();

    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      const { rows } = await client.query<{ table_name: string; column_name: string }>(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name <> 'lisa_schema'",
        [schema],
      );
      const postgresShape: Record<string, string[]> = {};
      for (const row of rows) postgresShape[row.table_name] = [...(postgresShape[row.table_name] ?? []), row.column_name].sort();
      expect(postgresShape).toEqual(sqliteShape);
      const versions = await client.query(`SELECT version FROM "${schema}".lisa_schema`);
      expect(versions.rows).toEqual([{ version: 13 }]);
    } finally {
      await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await client.end();
    }
  });

  it("brings a schema PostgreSQL's first release left at version 1 up to version 13, keeping its runs", async () => {
    const schema = `shape_v1_${process.pid}_${Date.now().toString(36)}`;
    const base = await requirePostgres();
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "${schema}"; SET search_path TO "${schema}"`);
      await client.query(POSTGRES_HISTORY[0] ?? "");
      await client.query("CREATE TABLE lisa_schema (version INTEGER NOT NULL); INSERT INTO lisa_schema VALUES (1)");
      await client.query(
        `INSERT INTO runs (id, installation_id, owner, repo, issue_number, issue_title, issue_body, requested_by, config, state, created_at, updated_at, finished_at)
         VALUES (1, 2, 'acme', 'api', 10, 'Title', 'Body', 'alice', '{}', 'failed', ${T0}, ${T0 + 5}, ${T0 + 5})`,
      );
      await client.query(`INSERT INTO events (run_id, kind, to_state, created_at) VALUES (1, 'transition', 'failed', ${T0 + 5})`);

      const url = new URL(base);
      url.searchParams.set("schema", schema);
      const store = new Store(url.toString());
      expect(await store.runs.get(1)).toMatchObject({ issue_number: 10, state: "failed", tracking_owed: 0 });
      // Shared migration 3 (PostgreSQL's 4) counts the runs already here as shown on GitHub.
      expect(await store.runs.behindOnGitHub()).toEqual([]);
      await store.close();
      const versions = await client.query(`SELECT version FROM "${schema}".lisa_schema`);
      expect(versions.rows).toEqual([{ version: 13 }]);
    } finally {
      await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await client.end();
    }
  });
});
