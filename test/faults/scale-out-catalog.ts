import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { FakeInvocation } from "../../dev/fake-agent.ts";
import { processesMatching } from "../../dev/processes-matching.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { TRACKING_INTERVAL_MS } from "../../src/publication/publish-tracking.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { quiet } from "./fault-world.ts";
import { type ScaleOutScenario, type ScaleOutWorld, WORKERS, type WorkerName } from "./scale-out-world.ts";

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

/** How long PostgreSQL is gone in the outage faults: past a claim's lease. */
const OUTAGE_MS = 20_000;

/**
 * Waits for the first delivery of `event`.`action` to be answered, and throws unless `lisa web`
 * answered it 503: one it took despite the outage would prove nothing.
 */
async function refused(world: ScaleOutWorld, event: string, action: string): Promise<void> {
  const first = () => world.github.deliveries().find((d) => d.event === event && d.action === action && d.status !== null);
  const delivery = await waitFor(`the ${event}.${action} delivery to be answered`, first, 30_000);
  if (delivery.status !== 503) throw new Error(`lisa web answered ${event}.${action} ${delivery.status} with PostgreSQL gone`);
}

/**
 * PostgreSQL gone for OUTAGE_MS from `from`, and back: nothing more. Deliveries answered 503
 * meanwhile reach Lisa only if it asks GitHub for them again: no one presses "Redeliver".
 */
async function outageUntilOver(world: ScaleOutWorld, from: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, from + OUTAGE_MS - Date.now())));
  await world.restoreDatabase();
}

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

/** SIGKILLs the worker whose agent hangs mid-session, then does `then`. */
const killMidSession =
  (then: (world: ScaleOutWorld, victim: WorkerName) => Promise<void>) =>
  async (world: ScaleOutWorld): Promise<void> => {
    const victim = await hanging(world);
    await world.kill(victim);
    await then(world, victim);
  };

const isPullRequest = (request: { method: string; path: string }) =>
  request.method === "POST" && /^\/repos\/[^/]+\/[^/]+\/pulls$/.test(request.path);
/** The 👀 on the labeling, Lisa's first write, made while a worker drains the commands. */
const isReaction = (request: { method: string; path: string }) =>
  request.method === "POST" && request.path.includes("/reactions");
/** The tracking comment, made once per run. */
const isNewComment = (request: { method: string; path: string }) =>
  request.method === "POST" && /^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/.test(request.path);

/** Ends Lisa's connections right after GitHub made the first change `matches` names. */
const terminateAfter = (matches: (request: { method: string; path: string }) => boolean) => async (world: ScaleOutWorld) => {
  let ended: Promise<number> | undefined;
  await world.onWrite(matches, () => {
    ended = world.terminateBackends();
  });
  await ended;
};

/** Kills the worker whose agent worked, right after GitHub made the first change `matches` names; it starts again once the run is taken over. */
const killAfter = (matches: (request: { method: string; path: string }) => boolean) => async (world: ScaleOutWorld) => {
  let victim: WorkerName | undefined;
  await world.onWrite(matches, () => {
    victim = world.workerOfSession();
    void world.kill(victim);
  });
  if (!victim) throw new Error("no worker to kill");
  await world.kill(victim);
  await waitFor("the run to be taken over", () => world.tracking().includes("took it over") || undefined, 60_000);
  await world.restart(victim);
};

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
    name: "scale-terminate-storm",
    what: "PostgreSQL ends every connection every 300 ms for 8 s while the agent works and its gate runs",
    invocations: [SLOW_CHANGE],
    config: SLOW_GATED,
    async inflict(world) {
      await sessionStarted(world);
      const until = Date.now() + 8_000;
      // Some rounds find every connection already gone, reconnecting: the storm goes on.
      while (Date.now() < until) {
        await world.terminateBackends().catch(() => 0);
        await new Promise((resolve) => setTimeout(resolve, 300));
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
    inflict: terminateAfter(isPullRequest),
  },
  {
    name: "scale-terminate-mid-drain",
    what: "PostgreSQL ends every connection right after the 👀 on the label, while a worker handles the label's command",
    invocations: [CHANGE],
    config: GATED,
    inflict: terminateAfter(isReaction),
  },
  {
    name: "scale-terminate-after-tracking-comment",
    what: "PostgreSQL ends every connection right after GitHub made the tracking comment, before Lisa records its id",
    invocations: [CHANGE],
    config: GATED,
    inflict: terminateAfter(isNewComment),
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
  (() => {
    let from = 0;
    return {
      name: "scale-outage-label",
      what: `PostgreSQL gone for ${OUTAGE_MS / 1_000} s, the issue opened and labeled meanwhile (lisa web answers 503); no one presses Redeliver`,
      invocations: [CHANGE],
      config: GATED,
      relay: true,
      async beforeLabel(world) {
        from = Date.now();
        await world.dropDatabase();
      },
      async inflict(world) {
        await refused(world, "issues", "labeled");
        await outageUntilOver(world, from);
      },
    } satisfies ScaleOutScenario;
  })(),
  {
    name: "scale-outage-approval",
    what: `PostgreSQL gone for ${OUTAGE_MS / 1_000} s, the pull request approved meanwhile (lisa web answers 503); no one presses Redeliver`,
    invocations: [CHANGE],
    config: GATED,
    relay: true,
    ends: "accepted",
    async inflict(world) {
      world.github.addCollaborator(world.repo, "bob", "write");
      await waitFor("pass 1 to reach review", () => world.tracking().includes("pass 1 · 👀 Ready for review"), 60_000);
      // Lisa's last writes of pass 1 are in before the store goes: the approval is what the outage takes.
      await quiet(world.github, TRACKING_INTERVAL_MS + 1_000);
      const [pull] = world.github.pulls(world.repo);
      if (!pull) throw new Error("pass 1 opened no pull request");
      const from = Date.now();
      await world.dropDatabase();
      await world.github.submitReview(world.repo, pull.number, { state: "APPROVED", user: "bob" });
      await refused(world, "pull_request_review", "submitted");
      await outageUntilOver(world, from);
    },
  },
  {
    name: "scale-worker-killed-mid-session",
    what: "SIGKILL of the worker whose agent works; the other takes the run over after the lease, then the killed one starts again",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    inflict: killMidSession(async (world, victim) => {
      await waitFor("the other worker to take the run over", () => world.agent.calls().length > 1, 60_000);
      await world.restart(victim);
    }),
  },
  {
    name: "scale-worker-restarted-mid-session",
    what: "SIGKILL of the worker whose agent works, started again at once: it gives its run up, and its worktree",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    inflict: killMidSession((world, victim) => world.restart(victim)),
  },
  {
    name: "scale-worker-restarted-busy",
    what: "SIGKILL of the worker whose agent works, started again at once with no room for runs: the other finishes the run",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    inflict: killMidSession((world, victim) => world.restart(victim, { concurrency: 0 })),
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
    name: "scale-worker-killed-mid-push",
    what: "SIGKILL of the worker while git pushes the step's branch (a pre-receive hook holds the push); it starts again once the run is taken over",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      const began = path.join(tempDir("scale-push"), "began");
      const hooks = path.join(world.github.gitDir(world.repo), "hooks");
      mkdirSync(hooks, { recursive: true });
      writeFileSync(path.join(hooks, "pre-receive"), `#!/bin/sh\ncat >/dev/null\ntouch '${began}'\nsleep 2\n`, { mode: 0o755 });
      await waitFor("the push to start", () => existsSync(began) || undefined, 60_000);
      const victim = world.workerOfSession();
      await world.kill(victim);
      await waitFor("the run to be taken over", () => world.tracking().includes("took it over") || undefined, 60_000);
      await world.restart(victim);
    },
  },
  {
    name: "scale-worker-killed-after-pr",
    what: "SIGKILL of the worker right after GitHub opened its pull request; the other takes the run over",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    inflict: killAfter(isPullRequest),
  },
  {
    name: "scale-workers-killed-mid-drain",
    what: "SIGKILL of both workers right after the 👀 on the label, while one handles the label's command; both start again",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      await world.onWrite(isReaction, () => {
        for (const name of WORKERS) void world.kill(name);
      });
      for (const name of WORKERS) await world.kill(name);
      for (const name of WORKERS) await world.restart(name);
    },
  },
  {
    name: "scale-worker-frozen-past-lease",
    what: "the worker whose agent works frozen (SIGSTOP) until the other took the run over, then thawed: it exits 70 and is started again",
    invocations: [HANGING, CHANGE],
    config: GATED,
    async inflict(world) {
      const victim = await hanging(world);
      world.signal(victim, "SIGSTOP");
      await waitFor("the run to be taken over", () => world.tracking().includes("took it over") || undefined, 60_000);
      world.signal(victim, "SIGCONT");
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
