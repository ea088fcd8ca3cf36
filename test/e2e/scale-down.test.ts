import type { ChildProcess } from "node:child_process";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { Store } from "../../src/store/store.ts";
import { staleWorktreesIn } from "../faults/fault-world.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { trackingBody } from "../support/tracking-body.ts";

// Two `lisa worker`s and a `lisa web` on PostgreSQL. A worker told to stop (a deploy) hands its
// run to the other without counting a crash; a worker frozen past its lease loses the run to the
// other and, when it wakes, stops with status 70 instead of working beside it.

const SECRET = "scale-down-secret-of-at-least-32-bytes";
const REPO = "acme/api";
const LISA_CLI = fileURLToPath(new URL("../../src/cli/lisa.ts", import.meta.url));
let postgresUrl = "";
beforeAll(async () => {
  postgresUrl = await requirePostgres();
});

const children: ChildProcess[] = [];
const orphans: number[] = [];
let github: GitHubEmulator | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const pid of orphans.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await github?.stop();
});

/** An emulator with one repository, two workers and a web process sharing a fresh schema. */
async function twoWorkers() {
  const agent = createFakeClaude([
    { write: { "half.txt": "half\n" }, hang: true },
    { write: { "change.txt": "done\n" }, manifest: { title: "Make the change", what: "Makes it." } },
  ]);
  github = createGitHubEmulator({ reposRoot: tempDir("down-repos"), webhookSecret: SECRET });
  await github.start();
  await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\ngates:\n  - test -f change.txt\n" });
  github.addCollaborator(REPO, "ann", "write");
  const url = new URL(postgresUrl);
  url.searchParams.set("schema", `scale_${randomUUID().replaceAll("-", "").slice(0, 12)}`);
  const databaseUrl = url.toString();
  const workers = new Map<string, { child: ChildProcess; dataDir: string }>();
  for (const name of ["w1", "w2"]) {
    const dataDir = path.join(tempDir(`down-${name}`), "lisa");
    const child = await startLisaChild(github, {
      dataDir,
      claudeBinary: agent.binary,
      secret: SECRET,
      databaseUrl,
      role: "worker",
      workerName: name,
      leaseSeconds: 10,
      shutdownGraceMs: 500,
      receivesWebhooks: false,
    });
    children.push(child);
    workers.set(name, { child, dataDir });
  }
  children.push(
    await startLisaChild(github, {
      dataDir: path.join(tempDir("down-web"), "lisa"),
      claudeBinary: agent.binary,
      secret: SECRET,
      databaseUrl,
      role: "web",
    }),
  );
  const issue = await github.createIssue(REPO, { title: "Make the change", body: "", user: "ann" });
  await github.labelIssue(REPO, issue.number, "lisa", "ann");
  const pids = await waitFor("the agent to hang", () => agent.hangingPids(), 60_000);
  orphans.push(...pids);
  const cwd = agent.calls()[0]?.cwd ?? "";
  const [holder, held] = [...workers].find(([, worker]) => cwd.startsWith(worker.dataDir)) ?? [];
  if (!holder || !held) throw new Error(`no worker ran the session in ${cwd}`);
  const store = new Store(databaseUrl);
  const tracking = () => (github ? trackingBody(github, REPO, issue.number) : "");
  const other = holder === "w1" ? "w2" : "w1";
  /** Starts the holder again on its data directory, with room for `concurrency` runs. */
  const restartHolder = async (concurrency: number) => {
    if (!github) throw new Error("no emulator");
    const child = await startLisaChild(github, {
      dataDir: held.dataDir,
      claudeBinary: agent.binary,
      secret: SECRET,
      databaseUrl,
      role: "worker",
      workerName: holder,
      leaseSeconds: 10,
      concurrency,
      receivesWebhooks: false,
    });
    children.push(child);
  };
  return { databaseUrl, store, holder, held, other, otherWorker: workers.get(other), restartHolder, tracking };
}

describe("workers leaving", () => {
  it("a worker told to stop hands its run to another, which resumes it without counting a crash; lisa status shows who runs what", async () => {
    const world = await twoWorkers();
    try {
      const status = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", LISA_CLI, "status"], {
        env: { ...process.env, DATABASE_URL: world.databaseUrl },
        encoding: "utf8",
      });
      expect(status.status).toBe(0);
      expect(status.stdout).toContain("0 command(s) waiting, 0 run(s) queued, 1 running");
      expect(status.stdout).toContain(`worker ${world.holder}: 1 running`);
      expect(status.stdout).toMatch(new RegExp(`run 1 {2}${REPO}#1 {2}for \\d+ s`));

      world.held.child.kill("SIGTERM");
      const code = await new Promise((resolve) => world.held.child.once("exit", resolve));
      expect(code).toBe(0);

      await waitFor("the run to reach review", () => world.tracking().includes("Ready for review"), 60_000);
      const [run] = await world.store.runs.inState("review");
      expect(run).toMatchObject({ restarts: 0, worker: world.other });
      expect(github?.pulls(REPO)).toHaveLength(1);
      expect((await world.store.events.of(run?.id ?? 0)).map((e) => e.kind)).not.toContain("taken_over");
    } finally {
      await world.store.close();
    }
  }, 120_000);

  it("a worker frozen past its lease loses the run to another, and stops with status 70 when it wakes", async () => {
    const world = await twoWorkers();
    try {
      world.held.child.kill("SIGSTOP");
      await waitFor(
        "the other worker to take the run over",
        async () => (await world.store.runs.inState("running"))[0]?.worker === world.other,
        60_000,
      );
      const exited = new Promise((resolve) => world.held.child.once("exit", resolve));
      world.held.child.kill("SIGCONT");
      expect(await exited).toBe(70);

      await waitFor("the run to reach review", () => world.tracking().includes("Ready for review"), 60_000);
      const [run] = await world.store.runs.inState("review");
      expect(run).toMatchObject({ restarts: 1, worker: world.other });
      expect(world.tracking()).toContain(
        `Worker ${world.holder} stopped renewing its claim on this run; worker ${world.other} took it over.`,
      );
      expect(github?.pulls(REPO)).toHaveLength(1);
      expect(
        await github?.readFile(REPO, "half.txt", run ? (await world.store.steps.of(run.id))[0]?.branch : undefined),
      ).toBeUndefined();
    } finally {
      await world.store.close();
    }
  }, 120_000);

  // Restarted with no room for runs (a worker busy with others), so that the other worker is the
  // one that finishes the run: each worker's disk is its own, and nobody else clears it.
  it("a worker killed mid-session and restarted gives up the run, the other finishes it, and the restarted one removes its worktree", async () => {
    const world = await twoWorkers();
    try {
      const exited = new Promise((resolve) => world.held.child.once("exit", resolve));
      world.held.child.kill("SIGKILL");
      await exited;
      await world.restartHolder(0);
      await waitFor("the run to reach review", () => world.tracking().includes("Ready for review"), 60_000);
      expect((await world.store.runs.inState("review"))[0]).toMatchObject({ restarts: 1, worker: world.other });
      expect(github?.pulls(REPO)).toHaveLength(1);
      // Kept at start-up (the holder might take its run up again), gone at its sweep once the other claimed it.
      await waitFor(
        "the holder's worktree of the run to go",
        async () => (await staleWorktreesIn(world.held.dataDir)).length === 0,
        15_000,
      );
    } finally {
      await world.store.close();
    }
  }, 120_000);

  it("a worker that handed its run back and restarted removes the run's worktree once the other worker has taken it up", async () => {
    const world = await twoWorkers();
    try {
      // The other worker waits, so that the run is still queued when the holder starts again.
      world.otherWorker?.child.kill("SIGSTOP");
      const exited = new Promise((resolve) => world.held.child.once("exit", resolve));
      world.held.child.kill("SIGTERM");
      await exited;
      await world.restartHolder(0);
      expect(await world.store.runs.inState("queued")).toHaveLength(1);
      world.otherWorker?.child.kill("SIGCONT");
      await waitFor("the run to reach review", () => world.tracking().includes("Ready for review"), 60_000);
      expect((await world.store.runs.inState("review"))[0]).toMatchObject({ restarts: 0, worker: world.other });
      expect(github?.pulls(REPO)).toHaveLength(1);
      await waitFor(
        "the holder's worktree of the run to go",
        async () => (await staleWorktreesIn(world.held.dataDir)).length === 0,
        15_000,
      );
    } finally {
      await world.store.close();
    }
  }, 120_000);
});
