import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { assertAllRouted } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { requirePostgres, startThrowawayPostgres, type ThrowawayPostgres } from "../../dev/test-postgres.ts";
import { createGitHubEmulator, type GitHubEmulator, type RecordedRequest } from "../../emulator/github-emulator.ts";
import { HEADLINE } from "../../src/reporting/tracking-comment.ts";
import { SWEEP_MS, UNHELD_SWEEP_MS } from "../../src/scheduler/worker.ts";
import type { RunState } from "../../src/store/transitions.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { trackingBody } from "../support/tracking-body.ts";
import {
  caughtUp,
  duplicateComments,
  FAULT_SECRET,
  type FaultCounts,
  orphansOf,
  quiet,
  staleWorktreesIn,
} from "./fault-world.ts";
import { githubBehind } from "./github-behind.ts";

// One fault at a time against Lisa scaled out: a GitHub emulator in this process, `lisa web` and
// two `lisa worker`s in processes of their own, each worker with its own data directory, sharing
// a database of the scenario's own (on the suite's PostgreSQL, or on a server of its own that it
// may restart). The world acts as the workers' supervisor: a worker that exits on its own (status
// 70 after a lost claim) is started again, as `lisa worker`'s deployment would. What is counted
// afterwards is what fault-world.ts counts, over every worker's data directory.

export const WORKERS = ["w1", "w2"] as const;
export type WorkerName = (typeof WORKERS)[number];

export interface ScaleOutWorld {
  github: GitHubEmulator;
  agent: ReturnType<typeof createFakeClaude>;
  /** The issue being worked on, `repo#number`. */
  repo: string;
  issue: number;
  /** The worker whose data directory the agent's latest session works in. */
  workerOfSession(): WorkerName;
  /** Kills a worker with `signal` and waits until it has exited; it stays down until restart(). */
  kill(worker: WorkerName, signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts a worker again on its data directory, under its name, as a supervisor would; with room
   * for `concurrency` runs (1 by default: 0 stands for a worker busy with other runs).
   */
  restart(worker: WorkerName, options?: { concurrency?: number }): Promise<void>;
  /** Sends a worker `signal` and nothing more (SIGSTOP and SIGCONT: a worker frozen for a while). */
  signal(worker: WorkerName, signal: NodeJS.Signals): void;
  /** Ends every connection Lisa's processes hold to the database (pg_terminate_backend); throws when there was none. */
  terminateBackends(): Promise<number>;
  /** Restarts the PostgreSQL server under Lisa, with a fast shutdown (scenarios with `ownServer`). */
  restartServer(): Promise<void>;
  /** The server gone for `ms` for Lisa (scenarios with `relay`): its connections dropped, new ones refused. */
  cutDatabase(ms: number): Promise<void>;
  /** The server gone for Lisa until restoreDatabase() (scenarios with `relay`). */
  dropDatabase(): Promise<void>;
  /** The server back for Lisa after dropDatabase(). */
  restoreDatabase(): Promise<void>;
  /** Calls `act` right after GitHub made the first change `matches` names, before its answer leaves. */
  onWrite(matches: (request: RecordedRequest) => boolean, act: (request: RecordedRequest) => void): Promise<RecordedRequest>;
  /** The tracking comment's text on the issue, "" before there is one. */
  tracking(): string;
}

export interface ScaleOutScenario {
  name: string;
  /** What is done to Lisa, in a few words. */
  what: string;
  /** A SIGKILL of a worker at a point no other scenario kills at. */
  killPoint?: boolean;
  /** The agent's invocations, in order, whichever worker makes them. */
  invocations: FakeInvocation[];
  /** `.github/lisa.yml` of the issue's repository. */
  config: string;
  /** How long a worker's runs may go on after SIGTERM before they are handed back. */
  shutdownGraceMs?: number;
  /** A PostgreSQL server of the scenario's own, which it may restart; the suite's otherwise. */
  ownServer?: boolean;
  /** Lisa reaches the server through a relay the scenario may cut. */
  relay?: boolean;
  /** Done, and awaited, before the issue is opened: what the opening and the labeling must already meet. */
  beforeLabel?(world: ScaleOutWorld): Promise<void>;
  /** Does the harm; called right before the issue is labeled. Every worker down afterwards is started again. */
  inflict(world: ScaleOutWorld): Promise<void>;
  /** Where the run ends once Lisa recovered: in review by default. */
  ends?: RunState;
}

const REPO = "acme/api";
/** A claim not renewed for this long is taken over (pg-boss's shortest heartbeat). */
const LEASE_SECONDS = 10;
/** How long Lisa has to bring the run to review after the fault; a takeover waits for a lease. */
const RECOVERY_MS = 120_000;
/** How long the supervisor waits before starting a worker that exited on its own. */
const SUPERVISOR_DELAY_MS = 500;

/** Runs `scenario` against `lisa web` and two workers, and counts what went wrong. */
export async function sufferScaleOutFault(scenario: ScaleOutScenario): Promise<FaultCounts> {
  const server: ThrowawayPostgres | undefined = scenario.ownServer ? await startThrowawayPostgres() : undefined;
  const serverUrl = server?.url ?? (await requirePostgres());
  const admin = new pg.Client({ connectionString: serverUrl });
  // The server restarted under it: the admin connection is opened again when needed.
  admin.on("error", () => {});
  await admin.connect();
  let adminClient = admin;
  const database = `faults_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  await adminClient.query(`CREATE DATABASE ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const relay = scenario.relay ? await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) }) : undefined;
  if (relay) url.port = String(relay.port);
  const databaseUrl = url.toString();

  const github = createGitHubEmulator({ reposRoot: tempDir("scale-fault-repos"), webhookSecret: FAULT_SECRET });
  await github.start();
  const agent = createFakeClaude(scenario.invocations);
  // Every data directory under one folder: the orphans are the processes that name it.
  const root = tempDir("scale-fault-data");
  const logs = path.join(process.env.LISA_SCALE_LOGS ?? tempDir("scale-fault-logs"), scenario.name);
  mkdirSync(logs, { recursive: true });
  const slots = new Map(
    WORKERS.map((name) => [
      name,
      { dataDir: path.join(root, name, "lisa"), child: undefined as ChildProcess | undefined, down: false },
    ]),
  );
  const others: ChildProcess[] = [];
  const exits: string[] = [];
  let over = false;
  const alive = (child: ChildProcess | undefined) => child !== undefined && child.exitCode === null && child.signalCode === null;

  const startWorker = async (name: WorkerName, { concurrency = 1 }: { concurrency?: number } = {}): Promise<void> => {
    const slot = slots.get(name);
    if (!slot) throw new Error(`no worker ${name}`);
    slot.down = false;
    const child = await startLisaChild(github, {
      dataDir: slot.dataDir,
      claudeBinary: agent.binary,
      secret: FAULT_SECRET,
      githubRetries: true,
      databaseUrl,
      role: "worker",
      workerName: name,
      leaseSeconds: LEASE_SECONDS,
      concurrency,
      receivesWebhooks: false,
      ...(scenario.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: scenario.shutdownGraceMs }),
      logFile: path.join(logs, `${name}.log`),
    });
    slot.child = child;
    child.once("exit", (code, signal) => {
      if (slot.down || over || slot.child !== child) return;
      // Not the scenario's doing: a supervisor starts it again, and the exit is told.
      exits.push(`${name} exited on its own (${signal ?? `status ${code}`})`);
      setTimeout(() => {
        if (!slot.down && !over && slot.child === child) void startWorker(name).catch(() => undefined);
      }, SUPERVISOR_DELAY_MS);
    });
  };

  const reconnect = async () => {
    // After a server restart the admin connection is gone too.
    const fresh = new pg.Client({ connectionString: serverUrl });
    fresh.on("error", () => {});
    await fresh.connect();
    await adminClient.end().catch(() => undefined);
    adminClient = fresh;
  };
  const terminateBackends = async (): Promise<number> => {
    const sql = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'lisa%'";
    const result = await adminClient.query(sql, [database]).catch(async () => {
      await reconnect();
      return adminClient.query(sql, [database]);
    });
    // A fault that ends nothing proves nothing.
    if (!result.rowCount) throw new Error("Lisa held no connection to end");
    return result.rowCount;
  };

  let issueNumber = 0;
  try {
    await github.createRepo(REPO, { files: { "README.md": "# Service\n" }, config: scenario.config });
    github.addCollaborator(REPO, "ann", "write");
    for (const name of WORKERS) await startWorker(name);
    others.push(
      await startLisaChild(github, {
        dataDir: path.join(root, "web", "lisa"),
        claudeBinary: agent.binary,
        secret: FAULT_SECRET,
        githubRetries: true,
        databaseUrl,
        role: "web",
        logFile: path.join(logs, "web.log"),
      }),
    );
    const world: ScaleOutWorld = {
      github,
      agent,
      repo: REPO,
      get issue() {
        return issueNumber;
      },
      workerOfSession() {
        const cwd = agent.calls().at(-1)?.cwd ?? "";
        const found = WORKERS.find((name) => cwd.startsWith(slots.get(name)?.dataDir ?? "\0"));
        if (!found) throw new Error(`no worker's data directory holds ${cwd}`);
        return found;
      },
      async kill(name, signal = "SIGKILL") {
        const slot = slots.get(name);
        if (!slot) throw new Error(`no worker ${name}`);
        slot.down = true;
        const child = slot.child;
        if (!child || !alive(child)) return;
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill(signal);
        await exited;
      },
      restart: startWorker,
      signal(name, signal) {
        slots.get(name)?.child?.kill(signal);
      },
      terminateBackends,
      async cutDatabase(ms) {
        await world.dropDatabase();
        await new Promise((resolve) => setTimeout(resolve, ms));
        await world.restoreDatabase();
      },
      async dropDatabase() {
        if (!relay) throw new Error(`${scenario.name} cuts the database: give it relay`);
        await relay.cut();
      },
      async restoreDatabase() {
        if (!relay) throw new Error(`${scenario.name} cuts the database: give it relay`);
        await relay.restore();
      },
      async restartServer() {
        if (!server) throw new Error(`${scenario.name} restarts the server: give it ownServer`);
        await server.restart();
        await reconnect();
      },
      onWrite(matches, act) {
        return new Promise((resolve) => {
          const stop = github.beforeAnswer((request) => {
            if (request.method === "GET" || !matches(request)) return;
            stop();
            act(request);
            resolve(request);
          });
        });
      },
      tracking: () => trackingBody(github, REPO, issueNumber),
    };

    await scenario.beforeLabel?.(world);
    // The harm is set up before the label, so that it can catch Lisa's very first write.
    const harm = scenario.inflict(world).then(
      () => undefined,
      (error: unknown) => error,
    );
    const issue = await github.createIssue(REPO, { title: "Add a health check", body: "Add health().", user: "ann" });
    issueNumber = issue.number;
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    const failed = await harm;
    if (failed) throw failed;
    for (const name of WORKERS) if (!alive(slots.get(name)?.child)) await startWorker(name);

    const ends = scenario.ends ?? "review";
    const reached = await reachedEnd(world, ends);
    if (!reached) console.log(`${scenario.name}: not ${ends} (logs in ${logs}); the issue says:\n${world.tracking()}`);
    if (exits.length > 0) console.log(`${scenario.name}: ${exits.join("; ")}`);
    // GitHub brought to the store by whichever process, and what another worker took from a worker
    // cleared from its disk at its next sweep (its disk is its own): both are awaited.
    if (reached) await caughtUp(github, databaseUrl);
    const stale = reached ? await staleAfterSweeps(slots) : [];
    for (const line of stale) console.log(`${scenario.name}: stale: ${line}`);
    // Every process stops as a deploy would stop it; what still runs afterwards has no owner.
    over = true;
    const running = [...[...slots.values()].map((slot) => slot.child), ...others].filter(alive) as ChildProcess[];
    await Promise.all(
      running.map((child) => {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        return exited;
      }),
    );
    await github.waitForWebhooks();
    // A request Lisa made that no route of the emulator answers fails the scenario, as in every emulated test.
    assertAllRouted(github);
    return {
      lostRuns: reached ? 0 : 1,
      duplicatePrs: Math.max(0, github.pulls(REPO).length - 1),
      duplicateComments: duplicateComments(github, [REPO]),
      orphans: await orphansOf(root, agent, (line) => console.log(`${scenario.name}: ${line}`)),
      staleWorktrees: stale.length,
      githubBehind: await githubBehind(github, databaseUrl, (line) =>
        console.log(`${scenario.name}: GitHub behind the store: ${line}`),
      ),
    };
  } finally {
    over = true;
    for (const child of [...[...slots.values()].map((slot) => slot.child), ...others]) child?.kill("SIGKILL");
    await github.stop();
    await adminClient.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await adminClient.end().catch(() => undefined);
    await relay?.stop();
    await server?.stop();
  }
}

/**
 * The stale worktrees in the workers' data directories once their sweeps had the time to clear
 * what another worker took over (UNHELD_SWEEP_MS and two sweeps): none as soon as a look finds
 * none, since nothing adds a worktree to a run at rest and a sweep only takes them away.
 */
async function staleAfterSweeps(slots: Map<WorkerName, { dataDir: string }>): Promise<string[]> {
  const deadline = Date.now() + UNHELD_SWEEP_MS + 2 * SWEEP_MS;
  for (;;) {
    const stale: string[] = [];
    for (const [name, { dataDir }] of slots) stale.push(...(await staleWorktreesIn(dataDir)).map((line) => `${name}: ${line}`));
    if (stale.length === 0 || Date.now() >= deadline) return stale;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Waits for the run to stand at `ends` with its pull request, and Lisa to fall quiet. */
async function reachedEnd(world: ScaleOutWorld, ends: RunState): Promise<boolean> {
  const deadline = Date.now() + RECOVERY_MS;
  while (Date.now() < deadline) {
    if (world.tracking().includes(`pass 1 · ${HEADLINE[ends]}`) && world.github.pulls(world.repo).length > 0) {
      await quiet(world.github);
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
