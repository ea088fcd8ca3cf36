// `npm run bench`: figures against a baseline measured in the same run, printed with their goals.
//
// 1. Webhook answer time: Lisa (with a run under way) and bare Probot answer the same signed
//    `issues.labeled` deliveries from the GitHub emulator over HTTP, interleaved one by one so load
//    on the machine falls on both alike; the time is taken at each server, from the request's
//    arrival to the end of the answer. Goal: p99 at most 2× bare Probot.
// 2. GitHub writes of a single-repository run with a near-instant agent, from the label to the
//    review gate, counted at the emulator. Goal: at most 8.

import { type EmulatedLisa, startEmulatedLisa } from "../dev/emulated-lisa.ts";
import { createFakeClaude } from "../dev/fake-agent.ts";

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 300);
const WARMUP = 20;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** A server (Lisa or bare Probot) with a repository of issues to label, and the answer times it measured. */
async function webhookTarget(withLisa: boolean) {
  const times: number[] = [];
  // The first run's agent hangs, so Lisa has a run under way for the whole measurement.
  const agent = createFakeClaude([{ hang: true }]);
  const env = await startEmulatedLisa({ claudeBinary: agent.binary, lisa: withLisa, onAnswered: (ms) => times.push(ms) });
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
  const baseline = await webhookTarget(false);
  const lisa = await webhookTarget(true);
  try {
    // One delivery to each in turn, each awaited, as GitHub sends them to one app.
    for (let i = 0; i < DELIVERIES + WARMUP; i++) {
      await baseline.label(i);
      await lisa.label(i);
    }
  } finally {
    await baseline.stop();
    await lisa.stop();
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
  console.log(`Webhook answer time in ms, ${DELIVERIES} interleaved issues.labeled deliveries each (after ${WARMUP} warm-up)`);
  console.log(`${"".padEnd(28)}${"p50".padStart(8)}${"p95".padStart(8)}${"p99".padStart(8)}${"max".padStart(8)}`);
  console.log(base.line);
  console.log(mine.line);
  const ratio = mine.p99 / base.p99;
  console.log(
    `Lisa / baseline: p50 ${(mine.p50 / base.p50).toFixed(2)}×, p99 ${ratio.toFixed(2)}× (goal ≤ 2×: ${ratio <= 2 ? "met" : "missed"})\n`,
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

await webhookAnswers();
await writesPerRun();
