import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { testStoreLocation } from "../../dev/test-database.ts";
import { LANES, type Lane } from "../../src/github/write-pacer.ts";
import { Store } from "../../src/store/store.ts";
import type { SlotAnswer, SlotRequest } from "../../src/store/write-slots.ts";
import { tempDir } from "../support/git-fixtures.ts";

const T0 = 1_800_000_000_000;
let clock = T0;
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  clock = T0;
});

/** Two stores on one database, as two Lisa processes hold it: a SQLite file, or a PostgreSQL schema. */
function twoProcesses(): [Store, Store] {
  const location = testStoreLocation(tempDir("slots"));
  const pair: [Store, Store] = [new Store(location, () => clock), new Store(location, () => clock)];
  stores.push(...pair);
  return pair;
}

const comment: SlotRequest = {
  installationId: 1,
  creates: true,
  lane: LANES.indexOf("normal"),
  horizonMs: Number.POSITIVE_INFINITY,
};
const at = (answer: SlotAnswer) => ("at" in answer ? answer.at : Number.NaN);
/** The write of a slot `store` reserved goes out now, or is told to wait. */
const send = (store: Store, answer: SlotAnswer, lane: Lane) =>
  store.writeSlots.send({
    installationId: 1,
    slot: "slot" in answer ? answer.slot : -1,
    at: at(answer),
    lane: LANES.indexOf(lane),
    marginMs: 25,
  });

describe("store.writeSlots.reserve", () => {
  it("never gives two writes of one installation slots closer than 1 s, whichever process asks", async () => {
    const [web, worker] = twoProcesses();
    const slots: number[] = [];
    for (let i = 0; i < 10; i++) {
      const store = i % 2 === 0 ? web : worker;
      slots.push(at(await store.writeSlots.reserve({ ...comment, creates: i % 3 === 0 })));
      clock += 150;
    }
    const sorted = [...slots].sort((a, b) => a - b);
    const gaps = sorted.slice(1).map((slot, i) => slot - (sorted[i] ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
    expect(sorted[0]).toBe(T0);
  });

  it("keeps two processes reserving at once 1 s apart", async () => {
    const location = testStoreLocation(tempDir("slots"));
    // Migrated here, before the two processes open it.
    await new Store(location).close();
    const child = fileURLToPath(new URL("../support/reserve-slots-child.ts", import.meta.url));
    const run = () => promisify(execFile)(process.execPath, [child, location, "30"]);
    const outputs = await Promise.all([run(), run()]);
    const slots = outputs.flatMap(({ stdout }) => JSON.parse(stdout) as number[]).sort((a, b) => a - b);
    expect(slots).toHaveLength(60);
    expect(Math.min(...slots.slice(1).map((slot, i) => slot - (slots[i] ?? 0)))).toBeGreaterThanOrEqual(1_000);
  });

  it("makes the 81st content-creating write of a minute wait until the first leaves the minute", async () => {
    const [web, worker] = twoProcesses();
    // At GitHub's 1 s spacing a minute holds 60 writes at most; at half a second, 80 fit in 40 s.
    const fast = { ...comment, gapMs: 500 };
    const slots: number[] = [];
    for (let i = 0; i < 80; i++) slots.push(at(await (i % 2 === 0 ? web : worker).writeSlots.reserve(fast)));
    expect(slots.at(-1)).toBe(T0 + 39_500);
    expect(await worker.writeSlots.reserve(fast)).toEqual({
      at: T0 + 60_000,
      slot: expect.any(Number),
      minute: 80,
      hour: 80,
      limitedBy: "minute",
    });
  });

  it("holds the 501st content-creating write of an hour until the hour's first leaves it", async () => {
    const [web, worker] = twoProcesses();
    const slots: number[] = [];
    for (let i = 0; i < 500; i++) {
      slots.push(at(await (i % 2 === 0 ? web : worker).writeSlots.reserve(comment)));
      // Far enough apart that no minute fills: only the hour does.
      clock += 7_000;
    }
    expect(slots.at(-1)).toBe(T0 + 499 * 7_000);
    // 8 of them in the minute before now, all 500 in the hour.
    expect(await web.writeSlots.reserve(comment)).toEqual({
      at: T0 + 3_600_000,
      slot: expect.any(Number),
      minute: 8,
      hour: 500,
      limitedBy: "hour",
    });
  });

  it("does not count one installation's writes against another's", async () => {
    const [web, worker] = twoProcesses();
    for (let i = 0; i < 80; i++) await web.writeSlots.reserve(comment);
    expect(await worker.writeSlots.reserve({ ...comment, installationId: 2 })).toEqual({
      at: T0,
      slot: expect.any(Number),
      minute: 0,
      hour: 0,
    });
  });

  it("lets a write that creates nothing use a gap while content waits for the minute", async () => {
    const [web] = twoProcesses();
    const fast = { ...comment, gapMs: 500 };
    for (let i = 0; i < 80; i++) await web.writeSlots.reserve(fast);
    expect(at(await web.writeSlots.reserve(fast))).toBe(T0 + 60_000);
    // The edits are not behind the held comment: they take the free slots after the 80 creations.
    expect(await web.writeSlots.reserve({ ...fast, creates: false })).toEqual({
      at: T0 + 40_000,
      slot: expect.any(Number),
      minute: 0,
      hour: 0,
    });
    expect(await web.writeSlots.reserve({ ...fast, creates: false })).toEqual({
      at: T0 + 40_500,
      slot: expect.any(Number),
      minute: 0,
      hour: 0,
    });
  });

  it("gives a write of a bounded lane no slot beyond its horizon, while a state write takes the first free one", async () => {
    const [web, worker] = twoProcesses();
    const ordinary = { ...comment, horizonMs: 2_000 };
    expect(await web.writeSlots.reserve(ordinary)).toMatchObject({ at: T0 });
    expect(await worker.writeSlots.reserve(ordinary)).toMatchObject({ at: T0 + 1_000 });
    expect(await web.writeSlots.reserve(ordinary)).toMatchObject({ at: T0 + 2_000 });
    // The next ordinary write would be 3 s ahead: it asks again when that is within 2 s.
    expect(await worker.writeSlots.reserve(ordinary)).toEqual({ retryAt: T0 + 1_000, minute: 3, hour: 3 });
    expect(await worker.writeSlots.reserve({ ...ordinary, lane: LANES.indexOf("edit") })).toMatchObject({ retryAt: T0 + 1_000 });
    // A state write takes a slot ahead of the ordinary ones not yet sent.
    expect(await worker.writeSlots.reserve({ ...ordinary, lane: LANES.indexOf("state") })).toMatchObject({ at: T0 });
  });

  it("puts an acknowledgement ahead of the unsent writes of later lanes, never ahead of one sent", async () => {
    const [web, worker] = twoProcesses();
    const first = await web.writeSlots.reserve(comment);
    expect(await send(web, first, "normal")).toEqual({ sentAt: T0 });
    clock += 100;
    for (const lane of ["edit", "normal", "state"] as const)
      await worker.writeSlots.reserve({ ...comment, lane: LANES.indexOf(lane) });
    // 1 s after the write that went out, ahead of the three waiting.
    const ack = await web.writeSlots.reserve({ ...comment, lane: LANES.indexOf("ack"), creates: true });
    expect(ack).toMatchObject({ at: T0 + 1_000 });
    expect(await worker.writeSlots.reserve({ ...comment, lane: LANES.indexOf("ack") })).toMatchObject({ at: T0 + 2_000 });
  });

  it("holds a later lane's write whose slot came while an earlier lane's is due within the gap, and sends that first", async () => {
    const [web, worker] = twoProcesses();
    const edit = await worker.writeSlots.reserve({ ...comment, lane: LANES.indexOf("edit"), creates: false });
    const ack = await web.writeSlots.reserve({ ...comment, lane: LANES.indexOf("ack") });
    expect([at(edit), at(ack)]).toEqual([T0, T0]);
    // The edit's slot has come, but the 👀 is due: it waits a gap after it.
    expect(await send(worker, edit, "edit")).toEqual({ retryAt: T0 + 1_025 });
    expect(await send(web, ack, "ack")).toEqual({ sentAt: T0 });
    clock = T0 + 1_025;
    expect(await send(worker, edit, "edit")).toEqual({ sentAt: T0 + 1_025 });
  });

  it("stops holding later lanes for an earlier lane's write that never went out (its process gone)", async () => {
    const [web, worker] = twoProcesses();
    await web.writeSlots.reserve({ ...comment, lane: LANES.indexOf("state") });
    const edit = await worker.writeSlots.reserve({ ...comment, lane: LANES.indexOf("edit"), creates: false });
    clock = T0 + 5_000;
    const slot = "slot" in edit ? edit.slot : -1;
    expect(
      await worker.writeSlots.send({ installationId: 1, slot, at: at(edit), lane: LANES.indexOf("edit"), marginMs: 25 }),
    ).toEqual({
      sentAt: T0 + 5_000,
    });
  });

  it("forgets slots over an hour old", async () => {
    const [web, worker] = twoProcesses();
    for (let i = 0; i < 80; i++) await web.writeSlots.reserve(comment);
    clock = T0 + 3_600_000 + 80_000;
    expect(await worker.writeSlots.reserve(comment)).toEqual({ at: clock, slot: expect.any(Number), minute: 0, hour: 0 });
  });
});
