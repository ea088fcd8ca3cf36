import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { commandKey, commandMac, hasValidMac, keptStoreKey } from "../../src/store/command-mac.ts";
import { migrationsOf } from "../../src/store/schema/versions.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { mountSmallDisk, type SmallDisk } from "../support/small-disk.ts";

const KEY = commandKey("the-webhook-secret-of-this-lisa");

describe("command rows carry a MAC", () => {
  it("that Lisa gives each row it writes and finds valid again", async () => {
    const store = new Store(":memory:", Date.now, KEY);
    await store.commands.add("d-1", "start_run", { issue: 3 }, "issue-3-labeled");
    const [row] = await store.commands.ready();
    expect(row?.mac).toMatch(/^[0-9a-f]{64}$/);
    expect(row && store.commands.isGenuine(row)).toBe(true);
    await store.close();
  });

  it("that no longer fits once a signed field changes, and that another key does not make", async () => {
    const store = new Store(":memory:", Date.now, KEY);
    await store.commands.add("d-1", "gesture", { body: "/lisa fix" });
    const [row] = await store.commands.ready();
    if (!row) throw new Error("no row");
    expect(store.commands.isGenuine({ ...row, payload: JSON.stringify({ body: "/lisa approve" }) })).toBe(false);
    expect(store.commands.isGenuine({ ...row, kind: "start_run" })).toBe(false);
    expect(store.commands.isGenuine({ ...row, delivery_id: "d-2" })).toBe(false);
    expect(store.commands.isGenuine({ ...row, created_at: row.created_at + 1 })).toBe(false);
    expect(store.commands.isGenuine({ ...row, mac: null })).toBe(false);
    expect(store.commands.isGenuine({ ...row, mac: "not hex" })).toBe(false);
    expect(hasValidMac(commandKey("another-secret-of-another-lisa"), row)).toBe(false);
    expect(hasValidMac(KEY, { ...row, mac: commandMac(KEY, row) })).toBe(true);
    await store.close();
  });

  it("which rows written before the migration lack: they are not blessed, so they count as not Lisa's", async () => {
    const file = path.join(tempDir("v7"), "lisa.db");
    const db = new DatabaseSync(file);
    db.exec("PRAGMA journal_mode = WAL;");
    for (const migration of migrationsOf("sqlite").slice(0, 7)) db.exec(migration);
    db.exec("PRAGMA user_version = 7");
    db.prepare("INSERT INTO commands (delivery_id, kind, payload, created_at) VALUES ('old', 'start_run', '{}', 1)").run();
    db.close();
    const store = new Store(file, Date.now, KEY);
    const [row] = await store.commands.ready();
    expect(row).toMatchObject({ delivery_id: "old", mac: null });
    expect(row && store.commands.isGenuine(row)).toBe(false);
    await store.close();
  });
});

let disk: SmallDisk | undefined;
afterEach(() => {
  disk?.release();
  disk = undefined;
});

describe("the store key kept in the data directory", () => {
  it("is made once and read back by every later start", () => {
    const dataDir = path.join(tempDir("kept-key"), "lisa");
    const key = keptStoreKey(dataDir);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(keptStoreKey(dataDir)).toBe(key);
    expect(readdirSync(dataDir)).toEqual(["store.key"]);
  });

  it("is never left empty: a full disk refuses the start, and the next start, with room, makes a whole key", async (context) => {
    const mount = tempDir("small-data");
    const mounted = await mountSmallDisk(mount, 1024 ** 2);
    if ("refused" in mounted) return context.skip(`no small file system can be mounted here: ${mounted.refused}`);
    disk = mounted;
    const script = fileURLToPath(new URL("../support/keep-store-key.ts", import.meta.url));
    const kept = () => JSON.parse(mounted.node(script, mount)) as { key?: string; error?: string };

    mounted.fill();
    expect(kept()).toEqual({ error: "ENOSPC" });
    mounted.free();
    const { key } = kept();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(kept()).toEqual({ key });
    // A restart on a full disk still reads the key it has.
    mounted.fill();
    expect(kept()).toEqual({ key });
  });

  it("refuses a key file that holds no key, saying what to do, instead of signing with it", () => {
    const dataDir = path.join(tempDir("empty-key"), "lisa");
    keptStoreKey(dataDir);
    writeFileSync(path.join(dataDir, "store.key"), "");
    expect(() => keptStoreKey(dataDir)).toThrow(/store\.key does not hold a store key \(64 hex digits\): remove it/);
  });
});
