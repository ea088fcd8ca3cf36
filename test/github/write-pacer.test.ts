import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import { testStoreLocation } from "../../dev/test-database.ts";
import { LisaOctokit } from "../../src/github/lisa-octokit.ts";
import {
  classifyRequest,
  createWritePacer,
  LANES,
  type LongWait,
  paceWrites,
  type WriteKind,
} from "../../src/github/write-pacer.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { useStrictNock } from "../support/strict-nock.ts";

const API = "https://api.github.com";
const T0 = 1_800_000_000_000;
let clock = T0;

useStrictNock();
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  clock = T0;
});

/** Stores on one database, as that many Lisa processes hold it, on the test's clock. */
function processes(count: number): Store[] {
  const location = testStoreLocation(tempDir("pacer"));
  const made = Array.from({ length: count }, () => new Store(location, () => clock));
  stores.push(...made);
  return made;
}

/**
 * Sleepers woken in time order, the clock set to each one's time: no real waiting. The clock moves
 * only once every write under way is asleep or done, since the store answers in its own time (a
 * round trip to PostgreSQL).
 */
function virtualTime() {
  const timers: { at: number; wake: () => void }[] = [];
  return {
    sleep: (ms: number) => new Promise<void>((wake) => timers.push({ at: clock + ms, wake })),
    async run(writes: readonly Promise<unknown>[]) {
      let done = 0;
      for (const write of writes)
        write.then(
          () => (done += 1),
          () => (done += 1),
        );
      for (;;) {
        while (timers.length + done < writes.length) await new Promise((resolve) => setTimeout(resolve, 1));
        if (done === writes.length) return;
        timers.sort((a, b) => a.at - b.at);
        const next = timers.shift();
        if (!next) return;
        clock = Math.max(clock, next.at);
        next.wake();
      }
    },
  };
}

describe("createWritePacer", () => {
  it("sends an acknowledgement first, then what the issue and a reviewer wait for, then the rest, tracking edits last", async () => {
    const [store] = processes(1);
    const time = virtualTime();
    const pace = createWritePacer({ slots: (store as Store).writeSlots, installationId: 1, now: () => clock, sleep: time.sleep });
    const sent: [string, number][] = [];
    const write = (name: string, kind: WriteKind) => pace(kind).then((at) => sent.push([name, (at - T0) / 1000]));
    // A write just went out: the ones asked for next wait for their turn.
    await write("comment 0", { creates: true, lane: "normal" });
    clock += 100;
    // Asked for in this order, all at once.
    const writes = [
      write("edit 1", { creates: false, lane: "edit" }),
      ...[1, 2, 3, 4].map((i) => write(`comment ${i}`, { creates: true, lane: "normal" })),
      write("pull request", { creates: true, lane: "state" }),
      write("👀", { creates: true, lane: "ack" }),
    ];
    await time.run(writes);
    await Promise.all(writes);
    // Sent 1 s and the send margin (25 ms) apart, measured from each send.
    expect(sent.sort((a, b) => a[1] - b[1])).toEqual([
      ["comment 0", 0],
      ["👀", 1.025],
      ["pull request", 2.05],
      ["comment 1", 3.075],
      ["comment 2", 4.1],
      ["comment 3", 5.125],
      ["comment 4", 6.15],
      // Asked for first, sent last: the comment shows the newest when it goes.
      ["edit 1", 7.175],
    ]);
  });

  it("sends a write whose store always answers later than the send margin, after recording it again a few times", async () => {
    const [store] = processes(1);
    const slots = (store as Store).writeSlots;
    let sends = 0;
    // Every answer of the store comes 100 ms after it recorded the send: a slow disk, or a busy event loop.
    const late = {
      reserve: slots.reserve.bind(slots),
      send: async (request: Parameters<typeof slots.send>[0]) => {
        sends += 1;
        const answer = await slots.send(request);
        clock += 100;
        return answer;
      },
    };
    const time = virtualTime();
    const pace = createWritePacer({ slots: late, installationId: 1, now: () => clock, sleep: time.sleep });
    const write = pace({ creates: true, lane: "normal" });
    await time.run([write]);
    expect(await write).toBe(T0 + 300);
    expect(sends).toBe(4);
  });

  it("says once that a write waits on a content budget, with the writes that fill it", async () => {
    const [store] = processes(1);
    for (let i = 0; i < 500; i++) {
      await (store as Store).writeSlots.reserve({
        installationId: 1,
        creates: true,
        lane: LANES.indexOf("normal"),
        horizonMs: 2_000,
      });
      clock += 7_000;
    }
    const waits: LongWait[] = [];
    const time = virtualTime();
    const pace = createWritePacer({
      slots: (store as Store).writeSlots,
      installationId: 1,
      now: () => clock,
      sleep: time.sleep,
      onLongWait: (wait) => waits.push(wait),
    });
    const started = clock;
    const slot = pace({ creates: true, lane: "normal" });
    await time.run([slot]);
    expect(await slot).toBe(T0 + 3_600_000);
    expect(waits).toEqual([
      {
        installationId: 1,
        waitMs: T0 + 3_600_000 - 2_000 - started,
        until: T0 + 3_600_000 - 2_000,
        minute: 8,
        hour: 500,
        limitedBy: "hour",
      },
    ]);
  });
});

describe("paceWrites", () => {
  it("sends an installation's writes at the slots the store gave them, after another process's, and its reads at once", async () => {
    const [mine, other] = processes(2) as [Store, Store];
    // Another Lisa process took the installation's first slot, and sent its write.
    const taken = await other.writeSlots.reserve({
      installationId: 5,
      creates: true,
      lane: LANES.indexOf("normal"),
      horizonMs: 2_000,
    });
    expect(taken).toMatchObject({ at: T0 });
    const slot = "slot" in taken ? taken.slot : -1;
    expect(await other.writeSlots.send({ installationId: 5, slot, at: T0, lane: LANES.indexOf("normal"), marginMs: 25 })).toEqual(
      {
        sentAt: T0,
      },
    );
    const octokit = new LisaOctokit({ auth: { token: "token" }, retry: { enabled: false } });
    // Sleeping moves the clock on: each request reaches GitHub at the time its pacer woke.
    const sleep = async (ms: number) => {
      clock += ms;
    };
    paceWrites(octokit, createWritePacer({ slots: mine.writeSlots, installationId: 5, now: () => clock, sleep }));
    const seen: string[] = [];
    const seenAt = (what: string, body: object) => () => {
      seen.push(`${what} at ${(clock - T0) / 1000} s`);
      return body;
    };
    nock(API)
      .post("/repos/acme/api/issues/1/comments")
      .reply(201, seenAt("comment", { id: 9 }))
      .get("/repos/acme/api")
      .reply(200, seenAt("read", { default_branch: "main" }))
      .patch("/repos/acme/api/issues/comments/9")
      .reply(200, seenAt("edit", {}))
      .post("/repos/acme/api/pulls")
      .reply(201, seenAt("pull request", { number: 2 }));
    await octokit.rest.issues.createComment({ owner: "acme", repo: "api", issue_number: 1, body: "hi" });
    await octokit.rest.repos.get({ owner: "acme", repo: "api" });
    await octokit.rest.issues.updateComment({ owner: "acme", repo: "api", comment_id: 9, body: "hi again" });
    await octokit.rest.pulls.create({ owner: "acme", repo: "api", title: "Change", head: "lisa/1", base: "main" });
    expect(seen).toEqual(["comment at 1.025 s", "read at 1.025 s", "edit at 2.05 s", "pull request at 3.075 s"]);
  });

  it("spaces writes 1 s apart from when each is sent, however late the one before woke", async () => {
    const [store] = processes(1) as [Store];
    const octokit = new LisaOctokit({ auth: { token: "token" }, retry: { enabled: false } });
    // The first write's timer fires 600 ms late, as an event loop busy with a git clone may make it.
    let late = 600;
    const sleep = async (ms: number) => {
      clock += ms + late;
      late = 0;
    };
    paceWrites(octokit, createWritePacer({ slots: store.writeSlots, installationId: 6, now: () => clock, sleep }));
    // Another write of the installation holds the first slot, so the first write sleeps.
    await store.writeSlots.reserve({ installationId: 6, creates: false, lane: LANES.indexOf("normal"), horizonMs: 2_000 });
    const sentAt: number[] = [];
    nock(API)
      .post("/repos/acme/api/issues/1/comments")
      .times(3)
      .reply(201, () => {
        sentAt.push(clock);
        return { id: 1 };
      });
    for (let i = 0; i < 3; i++)
      await octokit.rest.issues.createComment({ owner: "acme", repo: "api", issue_number: 1, body: "hi" });
    const gaps = sentAt.slice(1).map((at, i) => at - (sentAt[i] ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
  });
});

describe("LisaOctokit", () => {
  it("leaves the spacing of writes to the store: Octokit no longer holds notifying writes 3 s apart", async () => {
    const octokit = new LisaOctokit({ auth: { token: "token" }, retry: { enabled: false } });
    nock(API).post("/repos/acme/api/issues/1/comments").times(3).reply(201, { id: 1 });
    const started = performance.now();
    for (let i = 0; i < 3; i++)
      await octokit.rest.issues.createComment({ owner: "acme", repo: "api", issue_number: 1, body: "hi" });
    expect(performance.now() - started).toBeLessThan(1_000);
  }, 15_000);
});

describe("classifyRequest", () => {
  it.each([
    ["GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", {}, null],
    ["POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", {}, { creates: true, lane: "normal" }],
    ["POST", "/repos/acme/api/issues/3/comments", { request: { lane: "ack" } }, { creates: true, lane: "ack" }],
    ["POST", "/repos/acme/api/issues/3/reactions", {}, { creates: true, lane: "ack" }],
    ["POST", "/repos/acme/api/issues/comments/7/reactions", {}, { creates: true, lane: "ack" }],
    ["POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels", {}, { creates: true, lane: "state" }],
    ["PUT", "/repos/acme/api/issues/3/labels", {}, { creates: false, lane: "state" }],
    ["DELETE", "/repos/acme/api/issues/3/labels/lisa%3Aworking", {}, { creates: false, lane: "state" }],
    ["POST", "/repos/{owner}/{repo}/check-runs", {}, { creates: true, lane: "normal" }],
    ["POST", "/repos/{owner}/{repo}/pulls", {}, { creates: true, lane: "state" }],
    ["POST", "/repos/acme/api/pulls/4/requested_reviewers", {}, { creates: true, lane: "state" }],
    ["PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", {}, { creates: false, lane: "edit" }],
    ["PATCH", "/repos/acme/api/pulls/4", {}, { creates: false, lane: "normal" }],
    ["PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", {}, { creates: false, lane: "normal" }],
    ["POST", "/repos/acme/api/issues/3/comments", { request: { lane: "fast" } }, { creates: true, lane: "normal" }],
    ["POST", "/graphql", { query: "query { viewer { login } }" }, null],
    [
      "POST",
      "/graphql",
      { query: "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { clientMutationId } }" },
      { creates: false, lane: "normal" },
    ],
    ["POST", "/app/installations/{installation_id}/access_tokens", {}, null],
  ])("%s %s %j counts as %j", (method, url, extra, kind) => {
    expect(classifyRequest({ method, url, ...extra })).toEqual(kind);
  });
});
