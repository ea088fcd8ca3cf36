import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { tempDir } from "../../dev/temp-dir.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { freshSchema, seconds, verdict } from "./stats.ts";
import { workerReadConfig } from "./worker-read-config.ts";

const SECRET = "bench-webhook-secret-of-at-least-32-bytes";

const FLOOD = Number(process.env.BENCH_FLOOD ?? 2_000);
const AT_ONCE = 20;
const ISSUES = 100;

/**
 * A flood of deliveries that cannot concern Lisa (labels other than hers, comments without
 * `/lisa`), 20 at a time, to bare Probot, Lisa on SQLite and `lisa web` on PostgreSQL, each in
 * turn with the emulator in this process. Then, for Lisa, a `lisa` label: how long until its 👀.
 */
async function flood(kind: "probot" | "lisa" | "web") {
  const databaseUrl = kind === "web" ? freshSchema("flood") : undefined;
  const agent = createFakeClaude([{ write: { "a.ts": "export const a = 1;\n" }, manifest: { title: "A", what: "Adds a." } }]);
  const env = await startEmulatedLisa({
    claudeBinary: agent.binary,
    lisa: kind !== "probot",
    ...(databaseUrl ? { databaseUrl, role: "web" as const } : {}),
  });
  const { github } = env;
  try {
    await github.createRepo("bench/app", { files: { "README.md": "# bench\n" }, config: "label: lisa\n" });
    github.addCollaborator("bench/app", "alice", "write");
    // As deployed, a worker has read the repository's config (lisa web alone never calls GitHub).
    if (databaseUrl) await workerReadConfig(databaseUrl, github.installationId);
    const issues = await createIssues(github);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const floodMs = await sendFlood(github, issues);
    delay.disable();
    let eyesMs: number | undefined;
    if (kind === "lisa") {
      const issue = await github.createIssue("bench/app", { title: "The real one", user: "alice" });
      const labeled = performance.now();
      await github.labelIssue("bench/app", issue.number, "lisa", "alice");
      await waitFor("the 👀 on the lisa label", () => github.reactions("bench/app", issue.number).length > 0, 120_000);
      eyesMs = performance.now() - labeled;
    }
    return { perSecond: FLOOD / (floodMs / 1000), loopP99Ms: delay.percentile(99) / 1e6, eyesMs };
  } finally {
    await env.stop();
  }
}

/**
 * The flood sent to `lisa web` in a process of its own, a worker in another (both on PostgreSQL, as
 * deployed): each process's own event-loop delay over the flood, the emulator being elsewhere.
 */
async function floodProcesses(): Promise<{ perSecond: number; webP99Ms: number; workerP99Ms: number }> {
  const databaseUrl = freshSchema("flood_processes");
  const github = createGitHubEmulator({ reposRoot: tempDir("flood-repos"), webhookSecret: SECRET });
  await github.start();
  const agent = createFakeClaude([]);
  const dir = tempDir("flood-processes");
  const delayFile = (role: string) => path.join(dir, `${role}-loop.json`);
  const children: ChildProcess[] = [];
  try {
    await github.createRepo("bench/app", { files: { "README.md": "# bench\n" }, config: "label: lisa\n" });
    github.addCollaborator("bench/app", "alice", "write");
    await workerReadConfig(databaseUrl, github.installationId);
    for (const role of ["web", "worker"] as const) {
      children.push(
        await startLisaChild(github, {
          dataDir: path.join(dir, role),
          claudeBinary: agent.binary,
          secret: SECRET,
          databaseUrl,
          role,
          workerName: role,
          receivesWebhooks: role === "web",
          loopDelayFile: delayFile(role),
        }),
      );
    }
    const issues = await createIssues(github);
    // Each process measures afresh from here; their files are rewritten every 100 ms.
    for (const child of children) child.kill("SIGUSR2");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const floodMs = await sendFlood(github, issues);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const p99 = (role: string) => (JSON.parse(readFileSync(delayFile(role), "utf8")) as { p99Ms: number }).p99Ms;
    return { perSecond: FLOOD / (floodMs / 1000), webP99Ms: p99("web"), workerP99Ms: p99("worker") };
  } finally {
    for (const child of children) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await github.stop();
  }
}

/** The issues the flood lands on, in bench/app. */
async function createIssues(github: GitHubEmulator): Promise<number[]> {
  const issues: number[] = [];
  for (let i = 0; i < ISSUES; i++)
    issues.push((await github.createIssue("bench/app", { title: `Issue ${i}`, user: "alice" })).number);
  return issues;
}

/**
 * Sends the flood, AT_ONCE at a time: labels other than Lisa's and comments without `/lisa`, in
 * turn, on `issues`. Resolves with how long it took, in ms.
 */
async function sendFlood(github: GitHubEmulator, issues: number[]): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      for (let i = next++; i < FLOOD; i = next++) {
        const issue = issues[i % ISSUES] ?? 0;
        await (i % 2 === 0
          ? github.labelIssue("bench/app", issue, `topic-${Math.floor(i / ISSUES)}`, "alice")
          : github.commentOnIssue("bench/app", issue, `A thought, number ${i}, for whoever reads it.`, "alice"));
      }
    }),
  );
  return performance.now() - started;
}

export async function floodOfIrrelevantDeliveries(): Promise<void> {
  const probot = await flood("probot");
  const lisa = await flood("lisa");
  const web = await flood("web");
  console.log(
    `A flood of ${FLOOD} deliveries that cannot concern Lisa (other labels, comments without /lisa), ${AT_ONCE} at a time`,
  );
  const line = (name: string, r: { perSecond: number; loopP99Ms: number }) =>
    console.log(
      `${name.padEnd(26)}${r.perSecond.toFixed(0).padStart(6)} deliveries/s (${(r.perSecond / probot.perSecond).toFixed(2)}× Probot)` +
        `, event-loop delay p99 ${r.loopP99Ms.toFixed(1)} ms`,
    );
  line("bare Probot (baseline)", probot);
  line("Lisa on SQLite", lisa);
  line("lisa web on PostgreSQL", web);
  const ratio = Math.min(lisa.perSecond, web.perSecond) / probot.perSecond;
  console.log(`throughput, the lower of the two stores: ${ratio.toFixed(2)}× Probot (goal ≥ 0.8×: ${verdict(ratio >= 0.8)})`);
  const eyes = lisa.eyesMs ?? Number.NaN;
  console.log(`👀 on a lisa label sent right after the flood: ${seconds(eyes)} (goal < 2 s: ${verdict(eyes < 2_000)})`);
  const apart = await floodProcesses();
  const worst = Math.max(apart.webP99Ms, apart.workerP99Ms);
  console.log(
    `lisa web and a worker in processes of their own (${apart.perSecond.toFixed(0)} deliveries/s): event-loop delay p99 ` +
      `${apart.webP99Ms.toFixed(1)} ms in lisa web, ${apart.workerP99Ms.toFixed(1)} ms in the worker (goal < 10 ms: ${verdict(worst < 10)})\n`,
  );
}
