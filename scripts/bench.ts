// `npm run bench`: figures against a baseline measured in the same run, printed with their goals.
//
// 1. Webhook answer time: Lisa (with a run under way) and bare Probot answer the same signed
//    `issues.labeled` deliveries from the GitHub emulator over HTTP, interleaved one by one so load
//    on the machine falls on both alike; the time is taken at each server, from the request's
//    arrival to the end of the answer. Goal: p99 at most 2× bare Probot.
//    The same for `lisa web` on PostgreSQL (issue 9): goal p99 at most 2× and under 50 ms.
// 2. GitHub writes of a single-repository run with a near-instant agent, from the label to the
//    review gate, counted at the emulator. Goal: at most 8.
// 3. Throughput of claimed runs (issue 9): 8 issues labeled at once, each agent session taking
//    2 s (BENCH_AGENT_SECONDS), with 1, 2 and 4 `lisa worker`s sharing PostgreSQL; time until all 8 wait for review.
//    The workers run in this process (dev/scaled-lisa.ts); agents, gates and git in their own.

import { type EmulatedLisa, startEmulatedLisa } from "../dev/emulated-lisa.ts";
import { createFakeClaude } from "../dev/fake-agent.ts";
import { startScaledLisa } from "../dev/scaled-lisa.ts";
import { Store } from "../src/store/store.ts";

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 300);
const WARMUP = 20;
/** Where the scale-out figures keep their stores: a fresh schema per measurement. */
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const freshSchema = (name: string) => {
  const url = new URL(DATABASE_URL);
  url.searchParams.set("schema", `bench_${name}_${Date.now().toString(36)}`);
  return url.toString();
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * A server with a repository of issues to label, and the answer times it measured: bare Probot,
 * Lisa as one process on SQLite with a run under way, or `lisa web` on PostgreSQL (no worker).
 */
async function webhookTarget(kind: "probot" | "lisa" | "web") {
  const times: number[] = [];
  const withLisa = kind === "lisa";
  // The first run's agent hangs, so Lisa has a run under way for the whole measurement.
  const agent = createFakeClaude([{ hang: true }]);
  const env = await startEmulatedLisa({
    claudeBinary: agent.binary,
    lisa: kind !== "probot",
    onAnswered: (ms) => times.push(ms),
    ...(kind === "web" ? { databaseUrl: freshSchema("web"), role: "web" as const } : {}),
  });
  const { github } = env;
  await github.createRepo("bench/app", { files: { "README.md": "# bench\n" }, config: "label: lisa\n" });
  github.addCollaborator("bench/app", "alice", "write");
  const busy = await github.createIssue("bench/app", { title: "Keep the worker busy", user: "alice" });
  await github.labelIssue("bench/app", busy.number, "lisa", "alice");
  if (withLisa) while (!agent.hangingPids()) await new Promise((resolve) => setTimeout(resolve, 20));
  const issues: { number: number }[] = [];
  for (let i = 0; i < DELIVERIES + WARMUP; i++)
    issues.push(await github.createIssue("bench/app", { title: `Issue ${i}`, user: "alice" }));
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
    },
  };
}

async function webhookAnswers() {
  const baseline = await webhookTarget("probot");
  const lisa = await webhookTarget("lisa");
  const web = await webhookTarget("web");
  try {
    // One delivery to each in turn, each awaited, as GitHub sends them to one app.
    for (let i = 0; i < DELIVERIES + WARMUP; i++) {
      await baseline.label(i);
      await lisa.label(i);
      await web.label(i);
    }
  } finally {
    await baseline.stop();
    await lisa.stop();
    await web.stop();
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
  const base = row("bare Probot (baseline)", baseline.times);
  const mine = row("Lisa, one run under way", lisa.times);
  const webRow = row("lisa web on PostgreSQL", web.times);
  console.log(`Webhook answer time in ms, ${DELIVERIES} interleaved issues.labeled deliveries each (after ${WARMUP} warm-up)`);
  console.log(`${"".padEnd(28)}${"p50".padStart(8)}${"p95".padStart(8)}${"p99".padStart(8)}${"max".padStart(8)}`);
  console.log(base.line);
  console.log(mine.line);
  console.log(webRow.line);
  const ratio = mine.p99 / base.p99;
  console.log(
    `Lisa / baseline: p50 ${(mine.p50 / base.p50).toFixed(2)}×, p99 ${ratio.toFixed(2)}× (goal ≤ 2×: ${ratio <= 2 ? "met" : "missed"})`,
  );
  const webRatio = webRow.p99 / base.p99;
  const webMet = webRatio <= 2 && webRow.p99 < 50;
  console.log(
    `lisa web / baseline: p50 ${(webRow.p50 / base.p50).toFixed(2)}×, p99 ${webRatio.toFixed(2)}×, p99 ${webRow.p99.toFixed(2)} ms (goal ≤ 2× and < 50 ms: ${webMet ? "met" : "missed"})\n`,
  );
}

/** Requests that change something on GitHub; minting an installation token is not one. */
const isWrite = (request: { method: string; path: string }) =>
  request.method !== "GET" && !request.path.endsWith("/access_tokens");

async function writesPerRun() {
  const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } }]);
  const env: EmulatedLisa = await startEmulatedLisa({ claudeBinary: agent.binary });
  try {
    const { github } = env;
    await github.createRepo("bench/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("bench/api", "alice", "write");
    const issue = await github.createIssue("bench/api", { title: "Add a health endpoint", user: "alice" });
    const before = github.requests().length;
    await github.labelIssue("bench/api", issue.number, "lisa", "alice");
    await env.settle();
    const writes = github.requests().slice(before).filter(isWrite);
    console.log(
      `GitHub writes of a single-repository run, label to review gate: ${writes.length} (goal ≤ 8: ${writes.length <= 8 ? "met" : "missed"})`,
    );
    for (const write of writes) console.log(`  ${write.method} ${write.path} → ${write.status}`);
  } finally {
    await env.stop();
  }
}

/** Seconds from labeling 8 issues at once until all 8 wait for review, with `workers` workers. */
async function throughput(workers: number): Promise<number> {
  const agent = createFakeClaude([
    { run: [`sleep ${AGENT_SECONDS}`], write: { "change.txt": "ok\n" }, manifest: { title: "Change", what: "Changes it." } },
  ]);
  const databaseUrl = freshSchema(`w${workers}`);
  const scaled = await startScaledLisa({ databaseUrl, workers, claudeBinary: agent.binary });
  const store = new Store(databaseUrl);
  try {
    const { github } = scaled;
    // One repository per run: the workers share this process, and with it the per-repository git
    // lock that separate worker processes would each have their own of.
    const issues = [];
    for (let i = 0; i < RUNS; i++) {
      const repo = `bench/service-${i + 1}`;
      await github.createRepo(repo, {
        files: { "README.md": "# Service\n" },
        config: "label: lisa\ngates:\n  - test -f change.txt\n",
      });
      github.addCollaborator(repo, "alice", "write");
      issues.push({ repo, ...(await github.createIssue(repo, { title: `Change ${i + 1}`, user: "alice" })) });
    }
    const started = performance.now();
    await Promise.all(issues.map((issue) => github.labelIssue(issue.repo, issue.number, "lisa", "alice")));
    while (store.runsIn("review").length < RUNS) await new Promise((resolve) => setTimeout(resolve, 100));
    return (performance.now() - started) / 1000;
  } finally {
    store.close();
    await scaled.stop();
  }
}

const RUNS = 8;
/** How long each agent session of the throughput figure takes; real ones wait on their model for minutes. */
const AGENT_SECONDS = Number(process.env.BENCH_AGENT_SECONDS ?? 2);

async function scaleOut() {
  console.log(
    `Claimed runs: ${RUNS} issues labeled at once, ${AGENT_SECONDS} s agent sessions, workers sharing PostgreSQL (one run each at a time)`,
  );
  const one = await throughput(1);
  console.log(`  1 worker:  ${one.toFixed(1).padStart(5)} s`);
  for (const n of [2, 4]) {
    const seconds = await throughput(n);
    console.log(`  ${n} workers: ${seconds.toFixed(1).padStart(5)} s  (${(one / seconds).toFixed(2)}× the throughput of 1)`);
  }
}

const only = process.env.BENCH_ONLY;
if (!only || only === "webhooks") await webhookAnswers();
if (!only || only === "writes") await writesPerRun();
if (!only || only === "scale") await scaleOut();
