import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import { testStoreLocation } from "../../dev/test-database.ts";
import { createTestProbot } from "../../dev/test-probot.ts";
import { redeliverMissed, redeliverSinceLastStored } from "../../src/http/redeliver-missed.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { useStrictNock } from "../support/strict-nock.ts";

useStrictNock();
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const SINCE = Date.parse("2026-12-01T10:00:00Z");
const attempt = (id: number, guid: string, status_code: number, at = "2026-12-01T10:00:30Z") => ({
  id,
  guid,
  delivered_at: at,
  status_code,
});

describe("redeliverMissed", () => {
  it("asks again only for what Lisa could not take (5xx, or never reached), not what it refused nor what was answered later", async () => {
    const store = new Store(testStoreLocation(tempDir("redeliver")));
    stores.push(store);
    nock("https://api.github.com")
      .get("/app/hook/deliveries")
      .query({ per_page: 100 })
      .reply(200, [
        attempt(1, "lost-503", 503),
        attempt(2, "refused-400", 400),
        attempt(3, "unreached", 0),
        attempt(5, "answered-later", 200),
        attempt(4, "answered-later", 503),
        attempt(6, "before-the-outage", 503, "2026-12-01T09:00:00Z"),
      ]);
    nock("https://api.github.com").post("/app/hook/deliveries/1/attempts").reply(202, {});
    nock("https://api.github.com").post("/app/hook/deliveries/3/attempts").reply(202, {});

    const app = createTestProbot({ secret: "s".repeat(32) });
    expect(await redeliverMissed(app, store, SINCE)).toBe(2);
    // Asked once: a second look (a restart) asks for none again.
    nock("https://api.github.com")
      .get("/app/hook/deliveries")
      .query({ per_page: 100 })
      .reply(200, [attempt(1, "lost-503", 503)]);
    expect(await redeliverMissed(app, store, SINCE)).toBe(0);
  });
});

describe("redeliverSinceLastStored", () => {
  const app = createTestProbot({ secret: "s".repeat(32) });
  const now = () => Date.parse("2026-12-01T10:05:00Z");

  it("reads nothing when the store never took a webhook: it has missed none it knew of", async () => {
    const store = new Store(testStoreLocation(tempDir("redeliver-fresh")));
    stores.push(store);
    // Strict nock: any request to GitHub fails the test.
    expect(await redeliverSinceLastStored(app, store, now, new AbortController().signal, [0, 0])).toBe(0);
  });

  it("looks from the newest stored command, and asks again in the next round for a redelivery that failed too", async () => {
    const store = new Store(testStoreLocation(tempDir("redeliver-rounds")));
    stores.push(store);
    await store.commands.add("delivery-1", "label", {});
    const log = (attempts: ReturnType<typeof attempt>[]) =>
      nock("https://api.github.com").get("/app/hook/deliveries").query({ per_page: 100 }).reply(200, attempts);
    const at = new Date(Date.now() + 1_000).toISOString();
    log([attempt(7, "down", 0, at), attempt(6, "answered", 200, at)]);
    nock("https://api.github.com").post("/app/hook/deliveries/7/attempts").reply(202, {});
    // The redelivery found Lisa not reachable yet: a new failed attempt of the same delivery.
    log([attempt(8, "down", 0, at), attempt(7, "down", 0, at), attempt(6, "answered", 200, at)]);
    nock("https://api.github.com").post("/app/hook/deliveries/8/attempts").reply(202, {});
    // Answered at last: nothing more to ask for.
    log([attempt(9, "down", 200, at), attempt(8, "down", 0, at), attempt(7, "down", 0, at)]);

    expect(await redeliverSinceLastStored(app, store, () => Date.now(), new AbortController().signal, [0, 0, 0])).toBe(2);
  });

  it("stops between rounds once Lisa stops", async () => {
    const store = new Store(testStoreLocation(tempDir("redeliver-abort")));
    stores.push(store);
    await store.commands.add("delivery-1", "label", {});
    nock("https://api.github.com").get("/app/hook/deliveries").query({ per_page: 100 }).reply(200, []);
    const stopping = new AbortController();
    const rounds = redeliverSinceLastStored(app, store, () => Date.now(), stopping.signal, [0, 60_000]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    stopping.abort();
    await expect(rounds).rejects.toThrow(/abort/i);
  });
});
