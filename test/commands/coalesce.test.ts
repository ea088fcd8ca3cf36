import { describe, expect, it } from "vitest";
import { FAILED_OUTCOME, repeatedCommand } from "../../src/commands/coalesce.ts";
import type { CommandGesture } from "../../src/commands/gesture.ts";
import type { CommandRow } from "../../src/store/rows.ts";

const T0 = Date.parse("2026-11-24T10:00:00Z");

function gesture(overrides: Partial<CommandGesture> = {}, words = "retry"): CommandGesture {
  return {
    kind: "command",
    installationId: 2,
    owner: "acme",
    repo: "api",
    number: 7,
    isPullRequest: false,
    sender: "ann",
    command: { name: words as CommandGesture["command"]["name"], word: words, text: "" },
    where: "comment",
    commentId: 1,
    reviewId: null,
    url: null,
    createdAt: new Date(T0).toISOString(),
    ...overrides,
  };
}

let nextId = 1;
function row(payload: CommandGesture, recorded: number, finished: number | null): CommandRow {
  return {
    id: nextId++,
    delivery_id: `d-${nextId}`,
    event_key: null,
    kind: "gesture",
    priority: 0,
    issue: null,
    payload: JSON.stringify(payload),
    request: payload,
    state: finished === null ? "pending" : "done",
    outcome: null,
    created_at: recorded,
    finished_at: finished,
    attempts: 0,
    not_before: null,
    mac: null,
  };
}

const restless = async () => false;

describe("repeatedCommand", () => {
  const first = row(gesture(), T0 + 100, T0 + 900);

  it("joins the same words by the same person on the same issue, written within 10 s", async () => {
    const again = row(gesture({ commentId: 2, createdAt: new Date(T0 + 3_000).toISOString() }), T0 + 3_100, null);
    expect(await repeatedCommand(again, [first], restless)).toBe(first);
  });

  it("joins a repeat that arrived before the first was answered, whatever happened since", async () => {
    const pending = row(gesture(), T0 + 100, null);
    const again = row(gesture({ commentId: 2 }), T0 + 200, null);
    expect(await repeatedCommand(again, [pending], async () => true)).toBe(pending);
  });

  it("keeps the same words said again once the run came to rest after the first answer (the pass it started ended)", async () => {
    const again = row(gesture({ commentId: 2, createdAt: new Date(T0 + 1_000).toISOString() }), T0 + 1_200, null);
    const seen: [number, number][] = [];
    const rested = async (from: number, to: number) => {
      seen.push([from, to]);
      return true;
    };
    expect(await repeatedCommand(again, [first], rested)).toBeUndefined();
    expect(seen).toEqual([[T0 + 900, T0 + 1_200]]);
  });

  it("keeps the same words said again after the first failed and said so, and joins those sent before that", async () => {
    const failed = { ...row(gesture(), T0 + 100, T0 + 900), outcome: `${FAILED_OUTCOME}disk I/O error` };
    const afterward = row(gesture({ commentId: 2, createdAt: new Date(T0 + 2_000).toISOString() }), T0 + 2_100, null);
    expect(await repeatedCommand(afterward, [failed], restless)).toBeUndefined();
    const flood = row(gesture({ commentId: 3 }), T0 + 200, null);
    expect(await repeatedCommand(flood, [failed], restless)).toBe(failed);
  });

  it.each([
    ["by someone else", gesture({ sender: "bob" })],
    ["on another issue", gesture({ number: 8 })],
    ["in another repository", gesture({ repo: "web" })],
    ["another command", gesture({}, "status")],
    ["written more than 10 s later", gesture({ createdAt: new Date(T0 + 10_001).toISOString() })],
  ])("keeps a command %s", async (_what, payload) => {
    expect(await repeatedCommand(row(payload, T0 + 500, null), [first], restless)).toBeUndefined();
  });

  it("keeps a redirect with other guidance", async () => {
    const redirect = (text: string) => gesture({ command: { name: "redirect", word: "redirect", text } });
    const earlier = row(redirect("use v2"), T0, null);
    expect(await repeatedCommand(row(redirect("use v3"), T0 + 10, null), [earlier], restless)).toBeUndefined();
    expect(await repeatedCommand(row(redirect("use v2"), T0 + 10, null), [earlier], restless)).toBe(earlier);
  });

  it("never joins a label or a review: only commands repeat", async () => {
    const labeled: CommandRow = { ...first, id: 99, kind: "start_run", payload: "{}" };
    expect(await repeatedCommand(labeled, [first], restless)).toBeUndefined();
  });
});
