import { afterEach, describe, expect, it } from "vitest";
import { testStoreLocation } from "../../dev/test-database.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";

const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

describe("store.redeliveries", () => {
  it("lets one process, once, ask for a failed delivery's redelivery, also after a restart", async () => {
    const location = testStoreLocation(tempDir("redeliveries"));
    const web = new Store(location);
    const other = new Store(location);
    stores.push(web, other);
    expect(await web.redeliveries.take(41, "guid-a")).toBe(true);
    expect(await other.redeliveries.take(41, "guid-a")).toBe(false);
    await web.close();
    stores.splice(stores.indexOf(web), 1);
    const restarted = new Store(location);
    stores.push(restarted);
    expect(await restarted.redeliveries.take(41, "guid-a")).toBe(false);
    expect(await restarted.redeliveries.take(42, "guid-b")).toBe(true);
  });
});
