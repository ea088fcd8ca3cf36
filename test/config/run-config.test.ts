import path from "node:path";
import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { configOf, readConfigOf } from "../../src/config/run-config.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

describe("a run's configuration", () => {
  it("is validated once per row read: the same row gives the same object, a row read again a new one", () => {
    const row = { config: { label: "lisa", limits: { max_passes: 4 } } };
    const config = configOf(row);
    expect(config.limits.max_passes).toBe(4);
    expect(configOf(row)).toBe(config);
    const again = { config: { label: "lisa", limits: { max_passes: 4 } } };
    expect(configOf(again)).not.toBe(config);
    expect(configOf(again)).toEqual(config);
  });

  it("comes back from the store as the settings it was given, and is the current pass's", async () => {
    const dir = tempDir("run-config");
    const store = new Store(testDatabaseUrl(dir) ?? path.join(dir, "lisa.db"));
    const run = await store.runs.create({ ...newRun(1), config: { label: "lisa", limits: { max_passes: 4 } } }, oneStep(1));
    expect(run?.config).toEqual({ label: "lisa", limits: { max_passes: 4 } });
    expect((await readConfigOf(store, run?.id ?? 0)).limits.max_passes).toBe(4);
    await store.passes.recordConfig((await store.passes.current(run?.id ?? 0))?.id ?? 0, { limits: { max_passes: 7 } });
    expect((await readConfigOf(store, run?.id ?? 0)).limits.max_passes).toBe(7);
    await store.close();
  });
});
