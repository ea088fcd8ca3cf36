import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startScaledLisa } from "../../dev/scaled-lisa.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { Store } from "../../src/store/store.ts";
import { serviceIssues } from "./service-issues.ts";
import { freshSchema } from "./stats.ts";

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
    const issues = await serviceIssues(github, RUNS);
    const started = performance.now();
    await Promise.all(issues.map((issue) => github.labelIssue(issue.repo, issue.number, "lisa", "alice")));
    await waitFor(`${RUNS} runs to reach review`, async () => (await store.runs.inState("review")).length === RUNS, 600_000);
    return (performance.now() - started) / 1000;
  } finally {
    await store.close();
    await scaled.stop();
  }
}

const RUNS = 8;
/** How long each agent session of the throughput figure takes; real ones wait on their model for minutes. */
const AGENT_SECONDS = Number(process.env.BENCH_AGENT_SECONDS ?? 2);

export async function scaleOut(): Promise<void> {
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
