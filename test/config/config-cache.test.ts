import { describe, expect, it, vi } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { CONFIG_FRESH_MS, EDGE_ROW_MS, labelTriage } from "../../src/config/config-cache.ts";
import { CONFIG_PATH } from "../../src/config/parse-config.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";

const T0 = 1_000_000;
const label = (name: string, repo = "api") => ({ installationId: 2, owner: "acme", repo, label: name });

async function storeWithConfig(lisaLabel: string | null) {
  const store = new Store(testDatabaseUrl(tempDir("config-cache")) ?? ":memory:");
  const file = { installation_id: 2, owner: "acme", repo: "api", path: CONFIG_PATH, etag: 'W/"1"', content: "label: lisa\n" };
  await store.configFiles.save({ ...file, label: lisaLabel, validated_at: T0 });
  return store;
}

describe("labelTriage, the web process's check of a label", () => {
  it("calls another label foreign on a read of the last minute, and only unsure on an older one", async () => {
    const triage = labelTriage(await storeWithConfig("bot"));
    expect(await triage(label("bug"), T0 + 10)).toEqual({ kind: "foreign", lisaLabel: "bot" });
    expect(await triage(label("bot"), T0 + 20)).toEqual({ kind: "ours" });
    // Stale: stored, behind what is surely Lisa's, for a worker to read the config afresh.
    expect(await triage(label("bug"), T0 + CONFIG_FRESH_MS + 1)).toEqual({ kind: "unsure" });
    expect(await triage(label("bot"), T0 + CONFIG_FRESH_MS + 2)).toEqual({ kind: "ours" });
    // The default label is not Lisa's where the repository's file renamed it.
    expect(await triage(label("lisa"), T0 + CONFIG_FRESH_MS + 3)).toEqual({ kind: "unsure" });
  });

  it("takes the default label for Lisa's in a repository no worker has read, and is unsure of any other", async () => {
    const triage = labelTriage(new Store(testDatabaseUrl(tempDir("config-cache")) ?? ":memory:"));
    expect(await triage(label("lisa"), T0)).toEqual({ kind: "ours" });
    expect(await triage(label("bug"), T0 + 1)).toEqual({ kind: "unsure" });
  });

  it("is unsure, never sure it is foreign, where a fresh read found no usable file", async () => {
    const triage = labelTriage(await storeWithConfig(null));
    expect(await triage(label("bug"), T0 + 1)).toEqual({ kind: "unsure" });
    expect(await triage(label("lisa"), T0 + 2)).toEqual({ kind: "ours" });
  });

  it("reads the store once a second per repository read lately during a flood, and at once for any other", async () => {
    const store = await storeWithConfig("lisa");
    const reads = vi.spyOn(store.configFiles, "get");
    const triage = labelTriage(store);
    for (let i = 0; i < 500; i++) {
      expect(await triage(label(`area-${i}`), T0 + i)).toEqual({ kind: "foreign", lisaLabel: "lisa" });
      expect(await triage(label(`area-${i}`, "unread"), T0 + i)).toEqual({ kind: "unsure" });
    }
    expect(reads).toHaveBeenCalledTimes(501);
    await triage(label("bug"), T0 + EDGE_ROW_MS + 1);
    expect(reads).toHaveBeenCalledTimes(502);
  });
});
