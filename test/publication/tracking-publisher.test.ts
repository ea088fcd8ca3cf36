import { describe, expect, it } from "vitest";
import { trackingPublisher } from "../../src/publication/publish-tracking.ts";

/** A publisher whose edits take `ms` each, on a clock the test moves; records when each edit started. */
function setUp(intervalMs: number) {
  let clock = 0;
  const edits: number[] = [];
  const pending: (() => void)[] = [];
  const publisher = trackingPublisher(
    () =>
      new Promise<void>((resolve) => {
        edits.push(clock);
        pending.push(resolve);
      }),
    intervalMs,
    () => clock,
  );
  const finishEdits = async () => {
    while (pending.length) pending.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { publisher, edits, finishEdits, advance: (ms: number) => (clock += ms) };
}

describe("trackingPublisher", () => {
  it("edits at once the first time, without making the caller wait", () => {
    const { publisher, edits } = setUp(10_000);
    expect(publisher.publish()).toBeUndefined();
    expect(edits).toEqual([0]);
  });

  it("joins the requests made within the interval into one edit at the end", async () => {
    const { publisher, edits, finishEdits, advance } = setUp(10_000);
    publisher.publish();
    await finishEdits();
    for (let i = 0; i < 20; i++) {
      advance(100);
      publisher.publish();
    }
    expect(edits).toEqual([0]);
    const flushed = publisher.flush();
    await finishEdits();
    await flushed;
    expect(edits).toEqual([0, 2_000]);
  });

  it("waits for an edit under way before the last one, so the final state is written last", async () => {
    const { publisher, edits, finishEdits } = setUp(0);
    publisher.publish();
    publisher.publish();
    const flushed = publisher.flush();
    await finishEdits();
    await finishEdits();
    await flushed;
    expect(edits).toHaveLength(2);
  });

  it("writes nothing at flush when nothing changed since the last edit", async () => {
    const { publisher, edits, finishEdits } = setUp(10_000);
    publisher.publish();
    await finishEdits();
    await publisher.flush();
    expect(edits).toEqual([0]);
  });
});
