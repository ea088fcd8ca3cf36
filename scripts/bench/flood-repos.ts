import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { tempDir } from "../../dev/temp-dir.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator } from "../../emulator/github-emulator.ts";
import { freshSchema, seconds, verdict } from "./stats.ts";

const SECRET = "bench-webhook-secret-of-at-least-32-bytes";
const REPOS = Number(process.env.BENCH_FLOOD_REPOS ?? 200);
const FLOOD = Number(process.env.BENCH_FLOOD ?? 2_000);
const AT_ONCE = 20;

/**
 * Lisa as deployed (processes of their own: one on SQLite; `lisa web` and a worker on PostgreSQL),
 * 200 repositories of one installation whose config no worker has read yet: the 👀 on a `lisa`
 * label on an idle Lisa (the baseline), then 2,000 labels that are not Lisa's spread over the
 * repositories, 20 at a time, and right after them a `lisa` label: how long until its 👀.
 */
async function floodOverRepos(store: "probot" | "sqlite" | "postgres") {
  // The baseline: bare Probot in the bench's process, whose emulator it shares.
  const probot = store === "probot" ? await startEmulatedLisa({ claudeBinary: "true", lisa: false }) : undefined;
  const github = probot?.github ?? createGitHubEmulator({ reposRoot: tempDir("flood-repos"), webhookSecret: SECRET });
  if (!probot) await github.start();
  const agent = createFakeClaude([{ write: { "a.ts": "export const a = 1;\n" }, manifest: { title: "A", what: "Adds a." } }]);
  const dir = tempDir("flood-repos-lisa");
  const children: ChildProcess[] = [];
  try {
    const repos = Array.from({ length: REPOS }, (_, i) => `bench/app-${i}`);
    const issues: number[] = [];
    for (const repo of repos) {
      await github.createRepo(repo, { files: { "README.md": "# bench\n" }, config: "label: lisa\n" });
      github.addCollaborator(repo, "alice", "write");
      issues.push((await github.createIssue(repo, { title: "An issue", user: "alice" })).number);
    }
    const databaseUrl = store === "postgres" ? freshSchema("flood_repos") : undefined;
    const roles = probot ? [] : databaseUrl ? (["web", "worker"] as const) : (["all"] as const);
    for (const role of roles)
      children.push(
        await startLisaChild(github, {
          dataDir: path.join(dir, role),
          claudeBinary: agent.binary,
          secret: SECRET,
          ...(databaseUrl ? { databaseUrl, role, workerName: role } : {}),
          receivesWebhooks: role !== "worker",
        }),
      );
    const eyes = async (repo: string) => {
      const issue = await github.createIssue(repo, { title: "The real one", user: "alice" });
      const labeled = performance.now();
      await github.labelIssue(repo, issue.number, "lisa", "alice");
      await waitFor("the 👀 on the lisa label", () => github.reactions(repo, issue.number).length > 0, 300_000);
      return performance.now() - labeled;
    };
    // The baseline: the first repository's config is read for it, so the flood finds the rest unread.
    const idleMs = probot ? Number.NaN : await eyes(repos[0] as string);
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        for (let i = next++; i < FLOOD; i = next++)
          await github.labelIssue(repos[i % REPOS] as string, issues[i % REPOS] ?? 0, `topic-${i}`, "alice");
      }),
    );
    const perSecond = FLOOD / ((performance.now() - started) / 1000);
    const afterMs = probot ? Number.NaN : await eyes(repos[REPOS - 1] as string);
    return { idleMs, afterMs, perSecond };
  } finally {
    for (const child of children) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await (probot ? probot.stop() : github.stop());
  }
}

export async function floodOverRepositories(): Promise<void> {
  console.log(
    `${FLOOD} labels that are not Lisa's over ${REPOS} repositories whose config no worker has read, ${AT_ONCE} at a time, as deployed`,
  );
  const probot = await floodOverRepos("probot");
  console.log(`  ${"bare Probot (baseline)".padEnd(32)} ${probot.perSecond.toFixed(0)} deliveries/s`);
  for (const store of ["sqlite", "postgres"] as const) {
    const r = await floodOverRepos(store);
    const name = store === "sqlite" ? "Lisa on SQLite" : "lisa web + a worker, PostgreSQL";
    console.log(
      `  ${name.padEnd(32)} ${r.perSecond.toFixed(0)} deliveries/s (${(r.perSecond / probot.perSecond).toFixed(2)}× Probot); ` +
        `👀 idle (baseline) ${seconds(r.idleMs)}, ` +
        `right after the flood ${seconds(r.afterMs)} (${(r.afterMs / r.idleMs).toFixed(1)}×; goal < 2 s: ${verdict(r.afterMs < 2_000)})`,
    );
  }
  console.log("");
}
