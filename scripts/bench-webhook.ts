// `npm run bench`: how fast Lisa answers a webhook while a run is busy, against bare Probot.
// Both answer the same signed `issues.labeled` deliveries from the GitHub emulator over HTTP; the
// time is measured at the server, from the request's arrival to the end of the answer.

import { startEmulatedLisa } from "../dev/emulated-lisa.ts";
import { createFakeClaude } from "../dev/fake-agent.ts";

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 300);
const WARMUP = 20;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function measure(withLisa: boolean): Promise<number[]> {
  const times: number[] = [];
  // The first run's agent hangs, so Lisa has a run under way for the whole measurement.
  const agent = createFakeClaude([{ hang: true }]);
  const env = await startEmulatedLisa({ claudeBinary: agent.binary, lisa: withLisa, onAnswered: (ms) => times.push(ms) });
  try {
    const { github } = env;
    await github.createRepo("bench/app", { files: { "README.md": "# bench\n" }, config: "label: lisa\n" });
    github.addCollaborator("bench/app", "alice", "write");
    const busy = await github.createIssue("bench/app", { title: "Keep the worker busy", user: "alice" });
    await github.labelIssue("bench/app", busy.number, "lisa", "alice");
    if (withLisa) while (!agent.hangingPids()) await new Promise((resolve) => setTimeout(resolve, 20));
    const issues = [];
    for (let i = 0; i < DELIVERIES + WARMUP; i++)
      issues.push(await github.createIssue("bench/app", { title: `Issue ${i}`, user: "alice" }));
    times.length = 0;
    // Sequential deliveries, as GitHub sends them to one app; each one is a new command for the worker.
    for (const issue of issues) await github.labelIssue("bench/app", issue.number, "lisa", "alice");
    return times.filter((t) => Number.isFinite(t)).slice(WARMUP);
  } finally {
    for (const pid of agent.hangingPids() ?? []) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    await env.stop();
  }
}

const row = (name: string, times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  const f = (p: number) => percentile(sorted, p).toFixed(2).padStart(8);
  return {
    name,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    line: `${name.padEnd(28)}${f(50)}${f(95)}${f(99)}${sorted.at(-1)?.toFixed(2).padStart(8)}`,
  };
};

const baseline = row("bare Probot (baseline)", await measure(false));
const lisa = row("Lisa, one run under way", await measure(true));
console.log(`webhook answer time in ms over ${DELIVERIES} issues.labeled deliveries (after ${WARMUP} warm-up)`);
console.log(`${"".padEnd(28)}${"p50".padStart(8)}${"p95".padStart(8)}${"p99".padStart(8)}${"max".padStart(8)}`);
console.log(baseline.line);
console.log(lisa.line);
console.log(`ratio Lisa / baseline: p50 ${(lisa.p50 / baseline.p50).toFixed(2)}×, p99 ${(lisa.p99 / baseline.p99).toFixed(2)}×`);
