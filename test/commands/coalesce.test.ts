import { describe, expect, it } from "vitest";
import { repeatedCommand } from "../../src/commands/coalesce.ts";
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
    payload: JSON.stringify(payload),
    state: finished === null ? "pending" : "done",
    outcome: null,
    created_at: recorded,
    finished_at: finished,
  };
}

describe("repeatedCommand", () => {
  const first = row(gesture(), T0 + 100, T0 + 900);

  it("joins the same words by the same person on the same issue, written within 10 s, before the first was answered", () => {
    const again = row(gesture({ commentId: 2, createdAt: new Date(T0 + 300).toISOString() }), T0 + 500, null);
    expect(repeatedCommand(again, [first])).toBe(first);
  });

  it("joins a repeat written before the first was answered though received after (a flood of comments)", () => {
    const again = row(gesture({ commentId: 2, createdAt: new Date(T0 + 800).toISOString() }), T0 + 2_000, null);
    expect(repeatedCommand(again, [first])).toBe(first);
  });

  it.each([
    ["written and received after the first was answered", gesture({ createdAt: new Date(T0 + 3_000).toISOString() }), T0 + 3_100],
    ["by someone else", gesture({ sender: "bob" }), T0 + 500],
    ["on another issue", gesture({ number: 8 }), T0 + 500],
    ["in another repository", gesture({ repo: "web" }), T0 + 500],
    ["another command", gesture({}, "status"), T0 + 500],
    ["written more than 10 s later", gesture({ createdAt: new Date(T0 + 10_001).toISOString() }), T0 + 500],
  ])("keeps a command %s", (_what, payload, recorded) => {
    expect(repeatedCommand(row(payload, recorded, null), [first])).toBeUndefined();
  });

  it("keeps a redirect with other guidance", () => {
    const redirect = (text: string) => gesture({ command: { name: "redirect", word: "redirect", text } });
    const earlier = row(redirect("use v2"), T0, null);
    expect(repeatedCommand(row(redirect("use v3"), T0 + 10, null), [earlier])).toBeUndefined();
    expect(repeatedCommand(row(redirect("use v2"), T0 + 10, null), [earlier])).toBe(earlier);
  });

  it("never joins a label or a review: only commands repeat", () => {
    const labeled: CommandRow = { ...first, id: 99, kind: "start_run", payload: "{}" };
    expect(repeatedCommand(labeled, [first])).toBeUndefined();
  });
});
