import { describe, expect, it, vi } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { CONFIG_FRESH_MS, EDGE_ROW_MS, foreignLabels } from "../../src/config/config-cache.ts";
import { CONFIG_PATH } from "../../src/config/parse-config.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";

const T0 = 1_000_000;
const label = (name: string) => ({ installationId: 2, owner: "acme", repo: "api", label: name });

async function storeWithConfig(lisaLabel: string | null) {
  const store = new Store(testDatabaseUrl(tempDir("config-cache")) ?? ":memory:");
  const file = { installation_id: 2, owner: "acme", repo: "api", path: CONFIG_PATH, etag: 'W/"1"', content: "label: lisa\n" };
  await store.configFiles.save({ ...file, label: lisaLabel, validated_at: T0 });
  return store;
}

describe("foreignLabels, the web process's check of an issues.labeled", () => {
  it("names the Lisa label of a repository a worker read in the last minute, for any other label", async () => {
    const foreign = foreignLabels(await storeWithConfig("lisa"));
    expect(await foreign(label("bug"), T0 + 10)).toBe("lisa");
    expect(await foreign(label("lisa"), T0 + 20)).toBeUndefined();
    // Stale: stored again, for a worker to read the config afresh.
    expect(await foreign(label("bug"), T0 + CONFIG_FRESH_MS + 1)).toBeUndefined();
  });

  it("stores every label of a repository no worker has read yet", async () => {
    const store = new Store(testDatabaseUrl(tempDir("config-cache")) ?? ":memory:");
    const foreign = foreignLabels(store);
    expect(await foreign(label("bug"), T0)).toBeUndefined();
    expect(await foreign(label("area-1"), T0 + 1)).toBeUndefined();
  });

  it("reads the store once a second during a flood, not once a delivery", async () => {
    const store = await storeWithConfig("lisa");
    const reads = vi.spyOn(store.configFiles, "get");
    const foreign = foreignLabels(store);
    for (let i = 0; i < 500; i++) expect(await foreign(label(`area-${i}`), T0 + i)).toBe("lisa");
    expect(reads).toHaveBeenCalledTimes(1);
    await foreign(label("bug"), T0 + EDGE_ROW_MS + 1);
    expect(reads).toHaveBeenCalledTimes(2);
  });
});
