import { describe, expect, it } from "vitest";
import { drainInbox } from "../../src/scheduler/drain-inbox.ts";

interface Command {
  id: number;
  issue: string;
}

/** An inbox whose handlers finish when the test says, recording what ran at the same time. */
function inbox(commands: Command[]) {
  const pending = [...commands];
  const running = new Map<number, () => void>();
  const started: number[] = [];
  const overlaps: number[][] = [];
  let arrive = () => {};
  const looks = { count: 0 };
  return {
    looks,
    started,
    overlaps,
    running,
    add(command: Command) {
      pending.push(command);
      arrive();
    },
    finish(id: number) {
      running.get(id)?.();
    },
    source: {
      ready: async () => {
        looks.count += 1;
        return pending.slice();
      },
      issueOf: async (command: Command) => command.issue,
      open: async () => true,
      arrival: () =>
        new Promise<void>((resolve) => {
          arrive = resolve;
        }),
      handle: (command: Command) =>
        new Promise<void>((resolve) => {
          started.push(command.id);
          overlaps.push([...running.keys(), command.id]);
          running.set(command.id, () => {
            running.delete(command.id);
            pending.splice(pending.indexOf(command), 1);
            resolve();
          });
        }),
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("drainInbox", () => {
  it("handles commands of different issues at once, and those of one issue one at a time, in order", async () => {
    const box = inbox([
      { id: 1, issue: "a" },
      { id: 2, issue: "a" },
      { id: 3, issue: "b" },
    ]);
    const drained = drainInbox(box.source, 8);
    await tick();
    expect(box.started).toEqual([1, 3]);
    box.finish(3);
    await tick();
    expect(box.started).toEqual([1, 3]);
    box.finish(1);
    await tick();
    expect(box.started).toEqual([1, 3, 2]);
    box.finish(2);
    await drained;
    expect(box.overlaps).toEqual([[1], [1, 3], [2]]);
  });

  it("does not look at the table again for arrivals while every slot is taken, only when one frees", async () => {
    const box = inbox([1, 2].map((id) => ({ id, issue: `i${id}` })));
    const drained = drainInbox(box.source, 2);
    await tick();
    expect(box.looks.count).toBe(1);
    // A flood stored while both slots are busy: each arrival once cost a read of the ready commands.
    for (let id = 3; id <= 12; id++) {
      box.add({ id, issue: `i${id}` });
      await tick();
    }
    expect(box.looks.count).toBe(1);
    box.finish(1);
    await tick();
    expect(box.looks.count).toBe(2);
    expect(box.started).toEqual([1, 2, 3]);
    for (let id = 2; id <= 12; id++) {
      box.finish(id);
      await tick();
    }
    await drained;
    expect(box.started).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it("starts no more than its limit, and a command stored while it waits", async () => {
    const box = inbox([1, 2, 3].map((id) => ({ id, issue: `i${id}` })));
    const drained = drainInbox(box.source, 2);
    await tick();
    expect(box.started).toEqual([1, 2]);
    box.add({ id: 4, issue: "i4" });
    await tick();
    expect(box.started).toEqual([1, 2]);
    box.finish(2);
    await tick();
    expect(box.started).toEqual([1, 2, 3]);
    box.finish(1);
    await tick();
    expect(box.started).toEqual([1, 2, 3, 4]);
    box.finish(3);
    box.finish(4);
    await drained;
  });

  it("lets the others finish after a handler fails, starts nothing more, then throws its error", async () => {
    const failing = new Error("the database is unavailable");
    let finishOther = () => {};
    const started: number[] = [];
    const source = {
      ready: async () => [1, 2, 3].filter((id) => !started.includes(id)).map((id) => ({ id })),
      issueOf: async (command: { id: number }) => String(command.id),
      open: async () => true,
      arrival: () => new Promise<void>(() => {}),
      handle: async (command: { id: number }) => {
        started.push(command.id);
        if (command.id === 1) throw failing;
        await new Promise<void>((resolve) => {
          finishOther = resolve;
        });
      },
    };
    const drained = drainInbox(source, 2);
    let settled = false;
    drained.catch(() => {}).finally(() => (settled = true));
    await tick();
    expect(started).toEqual([1, 2]);
    expect(settled).toBe(false);
    finishOther();
    await expect(drained).rejects.toBe(failing);
    expect(started).toEqual([1, 2]);
  });
});
