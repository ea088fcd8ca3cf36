import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { freshSchema, percentile } from "./stats.ts";

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 300);
const WARMUP = 20;
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
  if (withLisa) await waitFor("the busy run's agent to start", () => agent.hangingPids());
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

export async function webhookAnswers(): Promise<void> {
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
