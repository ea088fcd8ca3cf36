import type { FakeInvocation } from "../../dev/fake-agent.ts";
import { processesMatching } from "../../dev/processes-matching.ts";
import { waitFor } from "../../dev/wait-for.ts";
import type { ScaleOutScenario, ScaleOutWorld, WorkerName } from "./scale-out-world.ts";

// The faults of Lisa scaled out (`lisa web` and two `lisa worker`s on PostgreSQL): the database's
// connections ended and its server restarted under them, and a worker killed while its run is at
// a distinct point. Each ends with the run in review, one pull request, on some worker.

const CHANGE: FakeInvocation = {
  write: { "health.ts": "export const health = () => 'ok';\n" },
  manifest: { title: "Add a health check", what: "health() answers ok." },
};
/** The change, after a session long enough for the database to go away during it. */
const SLOW_CHANGE: FakeInvocation = { ...CHANGE, run: ["sleep 4"] };
/** An agent mid-work, until it is killed. */
const HANGING: FakeInvocation = { write: { "health.ts": "export const he" }, hang: true };
const GATED = "label: lisa\ngates:\n  - test -f health.ts\n";
/** A gate that runs long enough to be caught running; its sleep is its mark in the process list. */
const SLOW_GATE = "sleep 2.417";
const SLOW_GATED = `label: lisa\ngates:\n  - ${SLOW_GATE} && test -f health.ts\n`;

/** Waits for the agent's first session to start, and says on which worker. */
async function sessionStarted(world: ScaleOutWorld): Promise<WorkerName> {
  await waitFor("the agent to start", () => world.agent.calls().length > 0, 60_000);
  return world.workerOfSession();
}

/** Waits for the hanging session to start, and says on which worker. */
async function hanging(world: ScaleOutWorld): Promise<WorkerName> {
  await waitFor("the agent to hang", () => world.agent.hangingPids(), 60_000);
  return world.workerOfSession();
}

/** Waits for the slow gate to run, and says on which worker (the one whose agent just worked). */
async function gateRunning(world: ScaleOutWorld): Promise<WorkerName> {
  await waitFor("the gate to run", () => processesMatching(SLOW_GATE).length > 0 || undefined, 60_000);
  return world.workerOfSession();
}

const isPullRequest = (request: { method: string; path: string }) =>
  request.method === "POST" && /^\/repos\/[^/]+\/[^/]+\/pulls$/.test(request.path);

export const SCALE_OUT_FAULTS: ScaleOutScenario[] = [
  {
    name: "scale-terminate-mid-session",
    what: "PostgreSQL ends every connection of web and workers three times, 1 s apart, while the agent works",
    invocations: [SLOW_CHANGE],
    config: GATED,
    async inflict(world) {
      await sessionStarted(world);
      for (let blip = 0; blip < 3; blip++) {
        await world.terminateBackends();
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    },
  },
  {
    name: "scale-terminate-mid-gate",
    what: "PostgreSQL ends every connection while a gate runs",
    invocations: [CHANGE],
    config: SLOW_GATED,
    async inflict(world) {
      await gateRunning(world);
      await world.terminateBackends();
    },
  },
  {
    name: "scale-terminate-after-pr",
    what: "PostgreSQL ends every connection right after GitHub opened the pull request, before Lisa hears so",
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      let ended: Promise<number> | undefined;
      await world.onWrite(isPullRequest, () => {
        ended = world.terminateBackends();
      });
      await ended;
    },
  },
  {
    name: "scale-server-restart-mid-session",
    what: "the PostgreSQL server restarted (fast shutdown) while the agent works",
    invocations: [SLOW_CHANGE],
    config: GATED,
    ownServer: true,
    async inflict(world) {
      await sessionStarted(world);
      await world.restartServer();
    },
  },
  {
    name: "scale-database-gone-past-lease",
    what: "PostgreSQL gone for 15 s, longer than a claim's lease, while the agent works",
    invocations: [SLOW_CHANGE],
    config: GATED,
    relay: true,
    async inflict(world) {
      await sessionStarted(world);
      await world.cutDatabase(15_000);
    },
  },
  {
    name: "scale-worker-killed-mid-session",
    what: "SIGKILL of the worker whose agent works; the other takes the run over after the lease, then the killed one starts again",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    async inflict(world) {
      const victim = await hanging(world);
      await world.kill(victim);
      await waitFor("the other worker to take the run over", () => world.agent.calls().length > 1, 60_000);
      await world.restart(victim);
    },
  },
  {
    name: "scale-worker-restarted-mid-session",
    what: "SIGKILL of the worker whose agent works, started again at once: it gives its run up, and its worktree",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    async inflict(world) {
      const victim = await hanging(world);
      await world.kill(victim);
      await world.restart(victim);
    },
  },
  {
    name: "scale-worker-restarted-busy",
    what: "SIGKILL of the worker whose agent works, started again at once with no room for runs: the other finishes the run",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    async inflict(world) {
      const victim = await hanging(world);
      await world.kill(victim);
      await world.restart(victim, { concurrency: 0 });
    },
  },
  {
    name: "scale-worker-killed-mid-gate",
    what: "SIGKILL of the worker whose gate runs; it starts again at once",
    killPoint: true,
    invocations: [CHANGE],
    config: SLOW_GATED,
    async inflict(world) {
      const victim = await gateRunning(world);
      await world.kill(victim);
      await world.restart(victim);
    },
  },
  {
    name: "scale-worker-killed-after-pr",
    what: "SIGKILL of the worker right after GitHub opened its pull request; the other takes the run over",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      let victim: WorkerName | undefined;
      await world.onWrite(isPullRequest, () => {
        victim = world.workerOfSession();
        void world.kill(victim);
      });
      if (victim) await world.kill(victim);
      await waitFor("the run to be taken over", () => world.tracking().includes("took it over") || undefined, 60_000);
      if (victim) await world.restart(victim);
    },
  },
  {
    name: "scale-worker-deployed-mid-session",
    what: "SIGTERM (a deploy) of the worker whose agent works, with half a second of grace, started again at once: the run is handed back",
    invocations: [HANGING, CHANGE],
    config: GATED,
    shutdownGraceMs: 500,
    async inflict(world) {
      // Either worker may take the handed-back run up; the other must leave nothing of it on its disk.
      const victim = await hanging(world);
      await world.kill(victim, "SIGTERM");
      await world.restart(victim);
    },
  },
  {
    name: "scale-worker-deployed-taken-elsewhere",
    what: "SIGTERM (a deploy) of the worker whose agent works while the other is frozen, started again busy; the other, thawed, takes the run up",
    invocations: [HANGING, CHANGE],
    config: GATED,
    shutdownGraceMs: 500,
    async inflict(world) {
      // The handed-back run is still queued when the deployed worker starts again: it keeps the worktree until the other takes the run.
      const victim = await hanging(world);
      const other = victim === "w1" ? "w2" : "w1";
      world.signal(other, "SIGSTOP");
      await world.kill(victim, "SIGTERM");
      await world.restart(victim, { concurrency: 0 });
      world.signal(other, "SIGCONT");
    },
  },
];
