import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { splitSchema } from "../../src/store/postgres-driver.ts";
import { freshSchema, percentile } from "./stats.ts";
import { workerReadConfig } from "./worker-read-config.ts";

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 300);
const WARMUP = 20;

type Target = Awaited<ReturnType<typeof webhookTarget>>;

/**
 * A server with a repository of issues to label, and the answer times it measured: bare Probot,
 * bare Probot committing each payload with one INSERT on PostgreSQL (`floor`) or on SQLite
 * (`sqliteFloor`), Lisa as one process on SQLite with a run under way, or `lisa web` on PostgreSQL
 * (no worker, but the config row a worker's read left).
 */
async function webhookTarget(kind: "probot" | "floor" | "sqliteFloor" | "lisa" | "web") {
  const times: number[] = [];
  const withLisa = kind === "lisa";
  // The first run's agent hangs, so Lisa has a run under way for the whole measurement.
  const agent = createFakeClaude([{ hang: true }]);
  const floor = kind === "floor" ? await durableFloor() : kind === "sqliteFloor" ? sqliteFloor() : undefined;
  const databaseUrl = kind === "web" ? freshSchema("web") : undefined;
  const env = await startEmulatedLisa({
    claudeBinary: agent.binary,
    lisa: kind === "lisa" || kind === "web",
    ...(floor ? { bareHandler: floor.insert } : {}),
    onAnswered: (ms) => times.push(ms),
    ...(databaseUrl ? { databaseUrl, role: "web" as const } : {}),
  });
  const { github } = env;
  await github.createRepo("bench/app", { files: { "README.md": "# bench\n" }, config: "label: lisa\n" });
  github.addCollaborator("bench/app", "alice", "write");
  const busy = await github.createIssue("bench/app", { title: "Keep the worker busy", user: "alice" });
  await github.labelIssue("bench/app", busy.number, "lisa", "alice");
  if (withLisa) await waitFor("the busy run's agent to start", () => agent.hangingPids());
  const issues: { number: number }[] = [];
  for (let i = 0; i < DELIVERIES + WARMUP; i++)
    issues.push(await github.createIssue("bench/app", { title: `Issue ${i}`, user: "alice" }));
  // Last, so it is fresh throughout: without it each delivery costs a read of the config row too.
  if (databaseUrl) await workerReadConfig(databaseUrl, github.installationId);
  times.length = 0;
  return {
    times,
    label: (i: number) => github.labelIssue("bench/app", issues[i]?.number ?? 0, "lisa", "alice"),
    async stop() {
      for (const pid of agent.hangingPids() ?? []) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
      await env.stop();
      await floor?.close();
    },
  };
}

/** One INSERT of the delivery's payload, committed through a pg.Pool: what any answer made durable on PostgreSQL costs. */
async function durableFloor() {
  const { connection, schema } = splitSchema(freshSchema("floor"));
  const pool = new pg.Pool({ connectionString: connection, options: `-c search_path=${schema}` });
  await pool.query(`CREATE SCHEMA ${schema}; CREATE TABLE deliveries (id TEXT PRIMARY KEY, payload TEXT NOT NULL)`);
  return {
    async insert({ id, payload }: { id: string; payload: unknown }) {
      await pool.query("INSERT INTO deliveries (id, payload) VALUES ($1, $2)", [id, JSON.stringify(payload)]);
    },
    async close() {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}

/** One INSERT of the payload into a SQLite file in WAL mode, as Lisa's store commits it (synchronous FULL, SQLite's default). */
function sqliteFloor() {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-floor-"));
  const db = new DatabaseSync(path.join(dir, "floor.db"));
  db.exec("PRAGMA journal_mode = WAL; CREATE TABLE deliveries (id TEXT PRIMARY KEY, payload TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO deliveries (id, payload) VALUES (?, ?)");
  return {
    async insert({ id, payload }: { id: string; payload: unknown }) {
      insert.run(id, JSON.stringify(payload));
    },
    async close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One delivery to each target in turn, each awaited, as GitHub sends them to one app. */
async function interleave(targets: Target[]): Promise<void> {
  try {
    for (let i = 0; i < DELIVERIES + WARMUP; i++) for (const target of targets) await target.label(i);
  } finally {
    for (const target of targets) await target.stop();
  }
}

const row = (name: string, times: number[]) => {
  const sorted = times.slice(WARMUP).sort((a, b) => a - b);
  const f = (p: number) => percentile(sorted, p).toFixed(2).padStart(8);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    line: `${name.padEnd(28)}${f(50)}${f(95)}${f(99)}${sorted.at(-1)?.toFixed(2).padStart(8)}`,
  };
};
const header = `${"".padEnd(28)}${"p50".padStart(8)}${"p95".padStart(8)}${"p99".padStart(8)}${"max".padStart(8)}`;
const ratios = (mine: { p50: number; p99: number }, base: { p50: number; p99: number }) =>
  `p50 ${(mine.p50 / base.p50).toFixed(2)}×, p99 ${(mine.p99 / base.p99).toFixed(2)}×`;

export async function webhookAnswers(): Promise<void> {
  // Two passes, each against its own baseline: Lisa's worker handles each label just after its answer,
  // on this process's event loop, which `lisa web` (a process of its own when deployed) must not share.
  let baseline = await webhookTarget("probot");
  const sqliteInsert = await webhookTarget("sqliteFloor");
  const lisa = await webhookTarget("lisa");
  await interleave([baseline, sqliteInsert, lisa]);
  const base = row("bare Probot (baseline)", baseline.times);
  const sqliteRow = row("Probot + one SQLite INSERT", sqliteInsert.times);
  const mine = row("Lisa, one run under way", lisa.times);
  console.log(`Webhook answer time in ms, ${DELIVERIES} interleaved issues.labeled deliveries each (after ${WARMUP} warm-up)`);
  console.log(`${header}\n${base.line}\n${sqliteRow.line}\n${mine.line}`);
  const ratio = mine.p99 / base.p99;
  console.log(
    `Lisa / baseline: ${ratios(mine, base)} (goal ≤ 2×: ${ratio <= 2 ? "met" : "missed"}); / Probot + one SQLite INSERT: ${ratios(mine, sqliteRow)}\n`,
  );

  baseline = await webhookTarget("probot");
  const floor = await webhookTarget("floor");
  const web = await webhookTarget("web");
  await interleave([baseline, floor, web]);
  const webBase = row("bare Probot (baseline)", baseline.times);
  const floorRow = row("Probot + one INSERT", floor.times);
  const webRow = row("lisa web on PostgreSQL", web.times);
  console.log(`The same, in a pass of their own: bare Probot, bare Probot committing one INSERT, lisa web`);
  console.log(`${header}\n${webBase.line}\n${floorRow.line}\n${webRow.line}`);
  const webRatio = webRow.p99 / webBase.p99;
  const webMet = webRatio <= 2 && webRow.p99 < 50;
  console.log(
    `lisa web / baseline: ${ratios(webRow, webBase)}, p99 ${webRow.p99.toFixed(2)} ms (goal ≤ 2× and < 50 ms: ${webMet ? "met" : "missed"}); / Probot + one INSERT: ${ratios(webRow, floorRow)}\n`,
  );
}
