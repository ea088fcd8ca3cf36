import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { waitFor } from "../../dev/wait-for.ts";
import type { Conversation } from "../../src/process/run-with-deadline.ts";
import { claudeProvider } from "../../src/providers/claude.ts";
import type { Steering } from "../../src/providers/provider.ts";
import { type GuidanceFeed, restartingInput, streamedInput } from "../../src/providers/session-input.ts";

const stream = claudeProvider.steering as Extract<Steering, { via: "stream" }>;
const RESULT = `${JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "ok" })}\n`;

/** A feed holding one guidance item once `give` is called, marked given when the session took it in. */
function oneItem() {
  const state = { ready: false, given: false };
  const feed: GuidanceFeed = {
    everyMs: 20,
    waiting: async () => (state.ready && !state.given ? [{ text: "use v2", given: () => (state.given = true) }] : []),
  };
  return { state, feed };
}

function child() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: string[] = [];
  stdin.on("data", (chunk: Buffer) => written.push(...chunk.toString().split("\n").filter(Boolean)));
  return { stdin, stdout, written, ended: () => stdin.writableEnded };
}

/** Begins `conversation` with the child, which hears each line written to the child's stdout (as runWithDeadline tells them). */
function talk(conversation: Conversation, c: ReturnType<typeof child>): void {
  const heard = conversation(c.stdin);
  createInterface({ input: c.stdout }).on("line", (line) => heard.line?.(line));
}

describe("streamedInput", () => {
  it("sends the prompt, then guidance as a further message; it is given once echoed, and stdin closes once all is answered", async () => {
    const { state, feed } = oneItem();
    const c = child();
    talk(streamedInput(stream, "the prompt", feed), c);
    await waitFor("the prompt", () => c.written.length === 1);
    expect(JSON.parse(c.written[0] ?? "")).toEqual({ type: "user", message: { role: "user", content: "the prompt" } });

    state.ready = true;
    await waitFor("the guidance", () => c.written.length === 2);
    expect(JSON.parse(c.written[1] ?? "").message.content).toBe("use v2");
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Written, not yet taken in: not given, not written again, and the first answer does not close stdin.
    expect(state.given).toBe(false);
    expect(c.written).toHaveLength(2);
    c.stdout.write(RESULT);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(c.ended()).toBe(false);

    c.stdout.write(`${JSON.stringify({ type: "user", message: { role: "user", content: "use v2" } })}\n`);
    await waitFor("the guidance to be given", () => state.given);
    c.stdout.write(RESULT);
    await waitFor("stdin to close", () => c.ended());
  });
});

describe("restartingInput", () => {
  it("waits for the next safe point once guidance waits, and stops the session there", async () => {
    const { state, feed } = oneItem();
    const c = child();
    let stopped = 0;
    talk(
      restartingInput({ via: "restart", safePoint: (line) => line === "tool done" }, "the prompt", feed, () => stopped++),
      c,
    );
    c.stdout.write("tool done\n");
    state.ready = true;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toBe(0);
    c.stdout.write("still thinking\n");
    c.stdout.write("tool done\n");
    await waitFor("the stop", () => stopped > 0);
    // The guidance waits for the session that resumes the work.
    expect(state.given).toBe(false);
  });

  it("stops a CLI that shows no safe point as soon as guidance waits", async () => {
    const { state, feed } = oneItem();
    let stopped = 0;
    talk(
      restartingInput({ via: "restart" }, "the prompt", feed, () => stopped++),
      child(),
    );
    state.ready = true;
    await waitFor("the stop", () => stopped > 0);
  });
});
