import { describe, expect, it } from "vitest";
import { coalescedEdits } from "../../src/github/coalesced-edits.ts";

/** A send that holds each edit until the test lets it go, and notes what it wrote. */
function heldSends() {
  const written: string[] = [];
  const held: { text: string; release: () => void; fail: (error: Error) => void }[] = [];
  const send = (text: string) =>
    new Promise<void>((resolve, reject) => {
      held.push({ text, release: resolve, fail: reject });
    }).then(() => {
      written.push(text);
    });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { written, held, send, settle };
}

describe("coalescedEdits", () => {
  it("writes the first text, then only the newest of those that came while it was on its way", async () => {
    const edit = coalescedEdits();
    const { written, held, send, settle } = heldSends();
    const done: string[] = [];
    const call = (text: string) => edit("comment 1", text, send).then(() => done.push(text));
    const first = call("v1");
    await settle();
    const later = [call("v2"), call("v3"), call("v4")];
    await settle();
    expect(held.map((h) => h.text)).toEqual(["v1"]);
    held[0]?.release();
    await first;
    expect(done).toEqual(["v1"]);
    await settle();
    expect(held.map((h) => h.text)).toEqual(["v1", "v4"]);
    held[1]?.release();
    await Promise.all(later);
    expect(written).toEqual(["v1", "v4"]);
    expect(done).toEqual(["v1", "v2", "v3", "v4"]);
  });

  it("keeps comments apart, and tells each caller whose edit failed", async () => {
    const edit = coalescedEdits();
    const { held, send, settle } = heldSends();
    const one = edit("comment 1", "a", send);
    const other = edit("comment 2", "b", send);
    await settle();
    expect(held.map((h) => h.text)).toEqual(["a", "b"]);
    held[0]?.fail(new Error("GitHub said 502"));
    held[1]?.release();
    await expect(one).rejects.toThrow("GitHub said 502");
    await expect(other).resolves.toBeUndefined();
    // The next edit of the failed comment is written afresh.
    const again = edit("comment 1", "a2", send);
    await settle();
    held[2]?.release();
    await expect(again).resolves.toBeUndefined();
    expect(held.map((h) => h.text)).toEqual(["a", "b", "a2"]);
  });
});
