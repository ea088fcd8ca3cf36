// `npm run bench`: figures against a baseline measured in the same run, printed with their goals.
// Each figure is in a module of scripts/bench/; BENCH_ONLY=<name> runs one (names below).
// Repetitions of Lisa and her baseline are interleaved, and each figure is their median
// (BENCH_REPS, at least 5), so load on the machine falls on both alike.
//
// webhooks    Webhook answer time of Lisa (a run under way) and, in a pass of its own, of `lisa web` on
//             PostgreSQL against bare Probot (and Probot + one INSERT), over HTTP, one delivery to each
//             in turn. Goal: p99 ≤ 2×, and < 50 ms.
// writes      GitHub writes of a single-repository run, label to review gate. Goal: ≤ 8.
// setup       Session set-up on a large repository (~10,000 files) from a warm mirror against raw
//             `git fetch` + `git worktree add`, in-process and as deployed (throttling on); and a
//             step less its agent against the git floor (fetch, worktree add, commit, push).
//             Goals: ≤ 1.2× both; ≤ 1.1× + 1 s.
// cache       Step start to agent start with a set-up cache hit on a 200 MB / 20,000-file dependency tree
//             against `git worktree add` alone, and the ratio cache restore / set-up (issue 41).
//             Goals: ≤ git + 1 s; ≤ 0.05.
// disk        Disk per extra concurrent session against one checkout. Goal: ≤ 1.1×.
// memory      Idle RSS of `npm start`'s entry against a bare Probot app. Goal: ≤ 150 MB.
// concurrent  8 runs labeled at once as deployed against 1, near-instant agent. Goal: < 2×.
// scale       Throughput of claimed runs with 1, 2 and 4 `lisa worker`s on PostgreSQL (issue 9).
// flood       2,000 deliveries that cannot concern Lisa, 20 at a time, to Lisa on SQLite and `lisa web`
//             on PostgreSQL against bare Probot, then a `lisa` label. Goals: ≥ 0.8× Probot's
//             throughput on both stores; 👀 < 2 s after the flood; then `lisa web` and a worker in
//             processes of their own: each one's event-loop delay p99 < 10 ms.
// repos       2,000 labels that are not Lisa's over 200 repositories whose config no worker has read,
//             then a `lisa` label, as deployed on SQLite and on PostgreSQL (web + worker), against the
//             👀 on an idle Lisa (issue 38). Goal: 👀 < 2 s on both.
// eyes        👀 on a lisa label while 8 runs of the same installation are writing, as deployed, against
//             the 👀 on an idle Lisa (issue 38). Goal: < 2 s.
// minute      Content-creating requests in the busiest minute of 3 workers taking 12 issues to
//             review as deployed, one installation. Goal: ≤ 80 (GitHub's secondary limit).

import { busiestMinute } from "./bench/busiest-minute.ts";
import { concurrentRuns } from "./bench/concurrent-runs.ts";
import { eyesWhileWriting } from "./bench/eyes-while-writing.ts";
import { floodOfIrrelevantDeliveries } from "./bench/flood.ts";
import { floodOverRepositories } from "./bench/flood-repos.ts";
import { idleMemory } from "./bench/idle-memory.ts";
import { scaleOut } from "./bench/scale-out.ts";
import { sessionDisk } from "./bench/session-disk.ts";
import { sessionSetupDeployed, sessionSetupInProcess } from "./bench/session-setup.ts";
import { setupCacheRestore } from "./bench/setup-cache.ts";
import { webhookAnswers } from "./bench/webhook-answers.ts";
import { writesPerRun } from "./bench/writes-per-run.ts";

const FIGURES: Record<string, () => Promise<void>> = {
  webhooks: webhookAnswers,
  writes: writesPerRun,
  setup: async () => {
    await sessionSetupInProcess();
    await sessionSetupDeployed();
  },
  cache: setupCacheRestore,
  disk: sessionDisk,
  memory: idleMemory,
  concurrent: concurrentRuns,
  scale: scaleOut,
  flood: floodOfIrrelevantDeliveries,
  repos: floodOverRepositories,
  eyes: eyesWhileWriting,
  minute: busiestMinute,
};

const only = process.env.BENCH_ONLY;
if (only && !FIGURES[only]) {
  console.error(`BENCH_ONLY=${only}: not a figure; one of ${Object.keys(FIGURES).join(", ")}`);
  process.exit(2);
}
for (const [name, figure] of Object.entries(FIGURES)) if (!only || only === name) await figure();
