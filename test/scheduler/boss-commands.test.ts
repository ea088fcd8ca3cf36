import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { freshSchemaUrl, requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { BossClaims } from "../../src/scheduler/boss-claims.ts";
import { BossCommandQueue } from "../../src/scheduler/boss-commands.ts";
import { SURE_COMMAND, UNSURE_COMMAND } from "../../src/store/commands.ts";
import { splitSchema } from "../../src/store/postgres-driver.ts";

// Commands on PostgreSQL go through pg-boss (issue 23): the commands of one issue are handed out
// one at a time, in the order they were stored, those of other issues beside them, a command that
// asks to be tried again stays ahead of its issue's later ones, and a row queued twice is one job.

const log = { info: () => {}, warn: () => {}, error: () => {} };
const started: BossClaims[] = [];
let base: string;
beforeAll(async () => {
  base = await requirePostgres();
});
afterEach(async () => {
  for (const claims of started.splice(0)) await claims.stop();
});

/** A worker's command queue on a fresh schema (or `url`'s), and what its handler saw. */
async function workerQueue(
  handle: (id: number, attempt: number) => Promise<"done" | "retry"> = async () => "done",
  url = freshSchemaUrl(base, "test_commands"),
) {
  const claims = new BossClaims({
    databaseUrl: url,
    leaseSeconds: 30,
    concurrency: 1,
    claims: true,
    onLost: async () => {},
    log,
  });
  await claims.start();
  started.push(claims);
  const queue = new BossCommandQueue({
    boss: () => claims.boss,
    schema: splitSchema(url).schema,
    concurrency: 4,
    retryMs: 0,
    log,
  });
  await queue.start();
  const seen: string[] = [];
  await queue.work(async (id, attempt) => {
    seen.push(`start ${id}`);
    const answer = await handle(id, attempt);
    seen.push(`end ${id}`);
    return answer;
  });
  return { queue, seen, claims, url };
}

/** A handler that holds each command until the test lets it go. */
function heldHandler() {
  const holds = new Map<number, () => void>();
  return {
    handle: (id: number) =>
      new Promise<"done">((resolve) => {
        holds.set(id, () => resolve("done"));
      }),
    release: (id: number) => holds.get(id)?.(),
  };
}

describe("commands through pg-boss", () => {
  it("are handed out one at a time per issue, in the order stored, and other issues' beside them", async () => {
    const held = heldHandler();
    const { queue, seen } = await workerQueue(held.handle);
    queue.enqueue(1, async () => "acme/api#1");
    queue.enqueue(2, async () => "acme/api#1");
    queue.enqueue(3, async () => "acme/web#2");
    await waitFor("commands 1 and 3 to start", () => seen.includes("start 1") && seen.includes("start 3"), 15_000);
    // Command 2 waits behind command 1 of the same issue, however long that takes.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(seen).not.toContain("start 2");
    held.release(1);
    await waitFor("command 2 to start", () => seen.includes("start 2"), 15_000);
    expect(seen.indexOf("end 1")).toBeLessThan(seen.indexOf("start 2"));
    held.release(2);
    held.release(3);
  }, 40_000);

  it("queue a flood stored during one send with a few INSERTs, not one each, each issue's commands still in order", async () => {
    const { queue, seen, claims } = await workerQueue();
    const inserts = vi.spyOn(claims.boss, "insert");
    const sends = vi.spyOn(claims.boss, "send");
    // 60 commands over 4 issues, stored in one burst as a flood's webhooks are.
    for (let id = 1; id <= 60; id++) queue.enqueue(id, async () => `acme/api#${id % 4}`);
    await waitFor("the 60 to end", () => seen.filter((line) => line.startsWith("end")).length === 60, 30_000);
    // One issue's commands cannot share an INSERT (they would share a creation time): 15 of each, 15 INSERTs.
    expect(sends).not.toHaveBeenCalled();
    expect(inserts.mock.calls.length).toBeLessThanOrEqual(16);
    for (let issue = 0; issue < 4; issue++) {
      const order = seen
        .filter((line) => line.startsWith("start"))
        .map((line) => Number(line.slice(6)))
        .filter((id) => id % 4 === issue);
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(order).toHaveLength(15);
    }
  }, 40_000);

  it("read each stored command's issue once, also for those that wait for a later INSERT behind their issue's first", async () => {
    const { queue, seen } = await workerQueue();
    let reads = 0;
    // 20 commands of one issue: one INSERT each, the rest waiting meanwhile.
    for (let id = 1; id <= 20; id++)
      queue.enqueue(id, async () => {
        reads += 1;
        return "acme/api#1";
      });
    await waitFor("the 20 to end", () => seen.filter((line) => line.startsWith("end")).length === 20, 30_000);
    expect(reads).toBe(20);
  }, 40_000);

  it("hand a command surely Lisa's out ahead of the unsure ones of other issues sent before it", async () => {
    const held = heldHandler();
    const { queue, seen } = await workerQueue(held.handle);
    // Four held commands fill the worker; three unsure labels and a sure one wait behind them.
    for (let id = 1; id <= 4; id++) await queue.send(id, `acme/busy#${id}`);
    await waitFor("the four to start", () => seen.filter((line) => line.startsWith("start")).length === 4, 15_000);
    for (let id = 5; id <= 7; id++) await queue.send(id, `acme/flood#${id}`, UNSURE_COMMAND);
    await queue.send(8, "acme/api#8", SURE_COMMAND);
    held.release(1);
    await waitFor("a fifth command to start", () => seen.filter((line) => line.startsWith("start")).length === 5, 15_000);
    expect(seen.filter((line) => line.startsWith("start")).at(-1)).toBe("start 8");
    for (let id = 2; id <= 8; id++) held.release(id);
    await waitFor("the unsure ones to start", () => seen.includes("start 7"), 15_000);
    for (let id = 5; id <= 7; id++) held.release(id);
  }, 40_000);

  it("hand a command that asks to be tried again out again, ahead of its issue's later ones", async () => {
    const attempts: string[] = [];
    const { queue, seen } = await workerQueue(async (id, attempt) => {
      attempts.push(`${id}@${attempt}`);
      return id === 1 && attempt < 2 ? "retry" : "done";
    });
    queue.enqueue(1, async () => "acme/api#1");
    queue.enqueue(2, async () => "acme/api#1");
    await waitFor("command 2 to end", () => seen.includes("end 2"), 20_000);
    expect(attempts).toEqual(["1@0", "1@1", "1@2", "2@0"]);
  }, 40_000);

  it("keep a command row queued twice as one job", async () => {
    const { queue, seen } = await workerQueue();
    await queue.send(7, "acme/api#7");
    await queue.send(7, "acme/api#7");
    await waitFor("command 7 to end", () => seen.includes("end 7"), 15_000);
    // Queued again after it was handled, as a worker's sweep of pending rows may: still not handed out again.
    await queue.send(7, "acme/api#7");
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(seen.filter((line) => line === "start 7")).toHaveLength(1);
  }, 40_000);

  it("hand a command out again when the worker handling it was killed", async () => {
    const url = freshSchemaUrl(base, "test_commands");
    const holder = spawn(process.execPath, [fileURLToPath(new URL("../support/command-holder.ts", import.meta.url)), url], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => holder.once("exit", resolve));
    await new Promise((resolve) => holder.stdout.on("data", (data) => String(data).includes("holding 1") && resolve(true)));
    holder.kill("SIGKILL");
    await exited;
    // Its heartbeat stops: pg-boss's supervisor fails the job, and the next worker to ask is handed it.
    const next = await workerQueue(async () => "done", url);
    await waitFor("the next worker to handle command 1", () => next.seen.includes("end 1"), 60_000);
  }, 90_000);
});
