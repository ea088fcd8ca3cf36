import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshSchemaUrl, requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { BossClaims } from "../../src/scheduler/boss-claims.ts";

// Runs on PostgreSQL are handed out by pg-boss (issue 23): a worker's loop is woken when a run is
// offered, never by a poll of its own; a held run's lease is pg-boss's heartbeat; a claim given
// back is another worker's at once; a claim that lapsed is said to be lost, a stop is not.

const log = { info: () => {}, warn: () => {}, error: () => {} };
const started: BossClaims[] = [];
let base: string;
beforeAll(async () => {
  base = await requirePostgres();
});
afterEach(async () => {
  for (const claims of started.splice(0)) await claims.stop();
});

/** A worker's claims on `url`, working: each hand-off and each lost claim is recorded. */
async function workerClaims(url: string, concurrency = 1) {
  const lost: number[] = [];
  let handed = 0;
  const claims = new BossClaims({
    databaseUrl: url,
    leaseSeconds: 10,
    concurrency,
    claims: true,
    onLost: async (runId) => {
      lost.push(runId);
    },
    log,
  });
  await claims.start();
  started.push(claims);
  await claims.work(() => handed++);
  return { claims, lost, handed: () => handed };
}

/** What `claims` is handed within `ms` (or until it holds `n`). */
async function takeWithin(claims: BossClaims, n: number, ms: number): Promise<number[]> {
  const taken: number[] = [];
  const deadline = Date.now() + ms;
  while (taken.length < n && Date.now() < deadline) {
    taken.push(...(await claims.take(n - taken.length)));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return taken;
}

/** The states of the run's jobs, as pg-boss has them. */
async function jobStates(claims: BossClaims, runId: number): Promise<string[]> {
  return (await claims.boss.findJobs("lisa-runs", { key: `run-${runId}` })).map((job) => job.state).sort();
}

describe("runs through pg-boss", () => {
  it("are handed to a working worker when offered, once however often they are offered, and held until released", async () => {
    const url = freshSchemaUrl(base, "test_claims");
    const worker = await workerClaims(url, 2);
    // The offer comes from another process (a worker that handled the command), as it would.
    const offering = await workerClaims(url, 0);
    await offering.claims.offer([7, 7]);
    await offering.claims.offer([7]);
    await waitFor("the worker to be woken", () => worker.handed() > 0, 15_000);
    expect(await worker.claims.take(2)).toEqual([7]);
    // Held: offered again, it is not handed to anyone.
    await offering.claims.offer([7]);
    expect(await takeWithin(worker.claims, 1, 2_500)).toEqual([]);
    expect(await jobStates(worker.claims, 7)).toEqual(["active"]);

    await worker.claims.release(7);
    expect(await jobStates(worker.claims, 7)).toEqual(["completed"]);
    // Released, it may be offered again (a redirect queued it), and is handed out again.
    await offering.claims.offer([7]);
    expect(await takeWithin(worker.claims, 1, 15_000)).toEqual([7]);
    expect(worker.lost).toEqual([]);
  }, 60_000);

  it("given back by a worker that is stopping, are another worker's at once", async () => {
    const url = freshSchemaUrl(base, "test_claims");
    const first = await workerClaims(url);
    await first.claims.offer([3]);
    await waitFor("the first worker to be handed the run", () => first.handed() > 0, 15_000);
    // Handed, not yet taken up, when the worker stops: given back, not kept until its lease lapses.
    await first.claims.stopWork();
    const second = await workerClaims(url);
    expect(await takeWithin(second.claims, 1, 15_000)).toEqual([3]);
    // A worker that stopped taking runs is handed none, and did not lose a claim.
    await second.claims.defer(3);
    expect(await takeWithin(first.claims, 1, 2_500)).toEqual([]);
    expect(await takeWithin(second.claims, 1, 15_000)).toEqual([3]);
    expect([first.lost, second.lost]).toEqual([[], []]);
  }, 60_000);

  it("held past their lease elsewhere are said to be lost; one held when the worker stops is not", async () => {
    const url = freshSchemaUrl(base, "test_claims");
    const holder = await workerClaims(url);
    await holder.claims.offer([5, 6]);
    expect(await takeWithin(holder.claims, 1, 15_000)).toHaveLength(1);
    const [held] = (await holder.claims.boss.findJobs("lisa-runs")).filter((job) => job.state === "active");
    if (!held) throw new Error("no job is active");
    const runId = (held.data as { runId: number }).runId;
    // The job is failed under the holder (as pg-boss's supervisor fails an unrenewed one): its next
    // heartbeat finds it gone.
    const other = await workerClaims(url, 0);
    await other.claims.reclaim([runId]);
    await waitFor("the claim to be said lost", () => holder.lost.length > 0, 15_000);
    expect(holder.lost).toEqual([runId]);

    // A run handed once the lost one was let go is held when the worker stops: not lost.
    expect(await takeWithin(holder.claims, 1, 15_000)).toHaveLength(1);
    await holder.claims.stop();
    started.splice(started.indexOf(holder.claims), 1);
    expect(holder.lost).toEqual([runId]);
  }, 60_000);
});
