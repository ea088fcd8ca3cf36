import { describe, expect, it } from "vitest";
import type { CoreDeps } from "../../../src/deps.ts";
import type { GitHubPort } from "../../../src/github/github-publisher.ts";
import type { LongWait } from "../../../src/github/write-pacer.ts";
import { publishTracking } from "../../../src/publication/publish-tracking.ts";
import { Store } from "../../../src/store/store.ts";
import { followWriteWaits } from "../../../src/workflow/pass/write-wait-notice.ts";
import { newRun, oneStep } from "../../support/store-fixtures.ts";

const T0 = Date.parse("2026-11-27T04:00:00Z");
const wait: LongWait = { installationId: 2, waitMs: 40_000, until: T0 + 40_000, minute: 80, hour: 212, limitedBy: "minute" };

describe("followWriteWaits", () => {
  it("asks for a tracking edit when a write of the run waits on GitHub's content limit, and shows why until its slot comes", () => {
    let listener: ((wait: LongWait) => void) | undefined;
    const gh = { onWriteWait: (heard: (wait: LongWait) => void) => (listener = heard) } as unknown as GitHubPort;
    let clock = T0;
    let edits = 0;
    const notice = followWriteWaits(
      gh,
      () => edits++,
      () => clock,
    );
    expect(notice()).toBeUndefined();
    listener?.(wait);
    expect(edits).toBe(1);
    expect(notice()).toBe("Waiting for GitHub's content limit: 80 writes this minute; the next goes out at 04:00:40 UTC.");
    clock = T0 + 40_000;
    expect(notice()).toBeUndefined();
  });

  it("shows nothing where writes are not paced", () => {
    expect(followWriteWaits({} as GitHubPort, () => {}, Date.now)()).toBeUndefined();
  });
});

describe("publishTracking", () => {
  it("puts the notice it is given on the tracking comment", async () => {
    const store = new Store(":memory:");
    const run = await store.runs.create(newRun(1), oneStep(1));
    const bodies: string[] = [];
    const gh = {
      findComment: async () => undefined,
      createComment: async (_ref: unknown, _issue: number, body: string) => {
        bodies.push(body);
        return 5;
      },
    } as unknown as GitHubPort;
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const deps = { store, now: () => T0, heldSecrets: [], log } as unknown as CoreDeps;
    await publishTracking(deps, gh, run?.id ?? 0, [], undefined, "Waiting for GitHub's content limit: 80 writes this minute.");
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toContain("> Waiting for GitHub's content limit: 80 writes this minute.");
    await store.close();
  });
});
