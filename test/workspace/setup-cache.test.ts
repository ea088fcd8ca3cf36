import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/sandbox/run-sandboxed.ts";
import {
  cacheStats,
  clearSetupCache,
  evictSetupCache,
  listEntries,
  recordCacheOutcome,
  restoreSetup,
  setupCacheKey,
  spareCopies,
  storeSetup,
} from "../../src/workspace/setup-cache.ts";
import { gitIn, tempDir } from "../support/git-fixtures.ts";

const SHOP = { owner: "acme", repo: "shop" };
const BLOG = { owner: "acme", repo: "blog" };
const KEY_FILES = ["package-lock.json"];

/** A repository's checkout as set-up leaves it: a tracked lockfile, and an ignored dependency tree. */
function setUpWorktree(files: Record<string, string> = { "node_modules/greet/index.js": "hello\n" }): string {
  const dir = tempDir("setup-worktree");
  gitIn(dir, "init", "--quiet");
  writeFileSync(path.join(dir, ".gitignore"), "node_modules/\ndist/\n");
  writeFileSync(path.join(dir, "package-lock.json"), '{"lockfileVersion":3}\n');
  gitIn(dir, "add", "--all");
  gitIn(dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "init");
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

/** A fresh checkout with nothing set up yet. */
const freshWorktree = () => setUpWorktree({});

const dirs: string[] = [];
const cacheRoot = () => {
  const dir = tempDir("setup-cache");
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  await spareCopies();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("setupCacheKey", () => {
  it("changes with the repository, the commands and a key file's contents, and with nothing else", async () => {
    const dir = freshWorktree();
    const key = await setupCacheKey(dir, SHOP, ["npm ci"], KEY_FILES);
    writeFileSync(path.join(dir, "README.md"), "not a key file\n");
    expect(await setupCacheKey(dir, SHOP, ["npm ci"], KEY_FILES)).toBe(key);
    expect(await setupCacheKey(dir, { owner: "ACME", repo: "Shop" }, ["npm ci"], KEY_FILES)).toBe(key);
    expect(await setupCacheKey(dir, BLOG, ["npm ci"], KEY_FILES)).not.toBe(key);
    expect(await setupCacheKey(dir, SHOP, ["npm install"], KEY_FILES)).not.toBe(key);
    writeFileSync(path.join(dir, "package-lock.json"), '{"lockfileVersion":3,"x":1}\n');
    expect(await setupCacheKey(dir, SHOP, ["npm ci"], KEY_FILES)).not.toBe(key);
  });

  it("does not read a key file through a link", async () => {
    const dir = freshWorktree();
    const outside = tempDir("outside");
    writeFileSync(path.join(outside, "package-lock.json"), "secret\n");
    rmSync(path.join(dir, "package-lock.json"));
    const missing = await setupCacheKey(dir, SHOP, ["npm ci"], KEY_FILES);
    symlinkSync(path.join(outside, "package-lock.json"), path.join(dir, "package-lock.json"));
    expect(await setupCacheKey(dir, SHOP, ["npm ci"], KEY_FILES)).toBe(missing);
  });
});

describe("storeSetup and restoreSetup", () => {
  it("stores only the ignored files set-up left, and restores them into a fresh worktree", async () => {
    const root = cacheRoot();
    const made = setUpWorktree({
      "node_modules/greet/index.js": "hello\n",
      "dist/app.js": "built\n",
      "notes.txt": "untracked\n",
    });
    const stored = await storeSetup(root, SHOP, "k1", made);
    expect(stored?.paths.sort()).toEqual(["dist", "node_modules"]);

    const next = freshWorktree();
    expect(await restoreSetup(root, SHOP, "k1", next)).toBe(true);
    expect(readFileSync(path.join(next, "node_modules/greet/index.js"), "utf8")).toBe("hello\n");
    expect(readFileSync(path.join(next, "dist/app.js"), "utf8")).toBe("built\n");
    expect(existsSync(path.join(next, "notes.txt"))).toBe(false);
  });

  it("gives each worktree a copy of its own: an edit, a deletion and an addition in one reach neither the cache nor the next", async () => {
    const root = cacheRoot();
    await storeSetup(
      root,
      SHOP,
      "k1",
      setUpWorktree({ "node_modules/greet/index.js": "hello\n", "node_modules/greet/package.json": "{}\n" }),
    );
    // The spare, a copy made ahead from the entry's files, is what a restore moves into the worktree.
    await spareCopies();
    const [entry] = await listEntries(root);
    const spare = statSync(path.join(entry?.dir ?? "", "spare", "node_modules/greet/index.js")).ino;
    const pristine = statSync(path.join(entry?.dir ?? "", "files", "node_modules/greet/index.js")).ino;
    expect(spare).not.toBe(pristine);
    const first = freshWorktree();
    await restoreSetup(root, SHOP, "k1", first);
    expect(statSync(path.join(first, "node_modules/greet/index.js")).ino).toBe(spare);
    writeFileSync(path.join(first, "node_modules/greet/index.js"), "poisoned\n");
    rmSync(path.join(first, "node_modules/greet/package.json"));
    writeFileSync(path.join(first, "node_modules/greet/extra.js"), "added\n");

    for (const spareReady of [true, false]) {
      await spareCopies();
      // Without a spare (another restore took it), the restore copies from the entry's files.
      if (!spareReady) rmSync(path.join(entry?.dir ?? "", "spare"), { recursive: true, force: true });
      const next = freshWorktree();
      await restoreSetup(root, SHOP, "k1", next);
      expect(readFileSync(path.join(next, "node_modules/greet/index.js"), "utf8")).toBe("hello\n");
      expect(existsSync(path.join(next, "node_modules/greet/package.json"))).toBe(true);
      expect(existsSync(path.join(next, "node_modules/greet/extra.js"))).toBe(false);
    }
    await spareCopies();
  });

  it("restores nothing for another repository's key, nor over a path the worktree already has", async () => {
    const root = cacheRoot();
    await storeSetup(root, SHOP, "k1", setUpWorktree());
    expect(await restoreSetup(root, BLOG, "k1", freshWorktree())).toBe(false);

    // A repository that commits a link named node_modules could lead the copy out of its worktree.
    const linked = freshWorktree();
    const elsewhere = tempDir("elsewhere");
    symlinkSync(elsewhere, path.join(linked, "node_modules"));
    expect(await restoreSetup(root, SHOP, "k1", linked)).toBe(false);
    expect(existsSync(path.join(elsewhere, "greet"))).toBe(false);
  });

  it("leaves no entry when storing fails halfway, and never takes an unfinished one for an entry", async () => {
    const root = cacheRoot();
    const made = setUpWorktree({ "node_modules/a/index.js": "a\n", "node_modules/b/index.js": "b\n" });
    // The key's place taken by a half-written folder (no entry.json): the finished copy cannot be renamed there.
    mkdirSync(path.join(root, "acme", "shop", "k1", "files"), { recursive: true });
    await expect(storeSetup(root, SHOP, "k1", made)).rejects.toThrow();
    expect(await listEntries(root)).toEqual([]);
    expect(await restoreSetup(root, SHOP, "k1", freshWorktree())).toBe(false);
    expect(readdirSync(path.join(root, "acme", "shop")).filter((name) => name.startsWith("."))).toEqual([]);

    // Killed outright, a store leaves its folder under its building name: no key reads it.
    const crashed = path.join(root, "acme", "shop", ".building-0123456789ab");
    mkdirSync(path.join(crashed, "files", "node_modules"), { recursive: true });
    writeFileSync(path.join(crashed, "entry.json"), '{"paths":["node_modules"],"bytes":1,"storedAt":1}');
    expect(await listEntries(root)).toEqual([]);
    // A later store sweeps it once it is old enough to be no one's.
    utimesSync(crashed, new Date(0), new Date(0));
    await storeSetup(root, SHOP, "k2", setUpWorktree());
    expect(existsSync(crashed)).toBe(false);
    expect((await listEntries(root)).map((e) => e.key)).toEqual(["k2"]);
  });
});

describe("evictSetupCache", () => {
  it("removes the least recently used entries until the cache fits", async () => {
    const root = cacheRoot();
    const big = "x".repeat(200_000);
    for (const key of ["old", "mid", "new"]) await storeSetup(root, SHOP, key, setUpWorktree({ "node_modules/a.js": big }));
    const entries = await listEntries(root);
    const at = (key: string) => entries.find((e) => e.key === key)?.dir ?? "";
    utimesSync(path.join(at("old"), "entry.json"), new Date(1_000), new Date(1_000));
    utimesSync(path.join(at("mid"), "entry.json"), new Date(2_000), new Date(2_000));
    utimesSync(path.join(at("new"), "entry.json"), new Date(3_000), new Date(3_000));
    // A restore is a use: "old" becomes the most recent.
    await restoreSetup(root, SHOP, "old", freshWorktree());

    const one = entries[0]?.bytes ?? 0;
    const removed = await evictSetupCache(root, one * 2);
    expect(removed.map((e) => e.key)).toEqual(["mid"]);
    expect((await listEntries(root)).map((e) => e.key).sort()).toEqual(["new", "old"]);
  });
});

describe("clearSetupCache", () => {
  it("clears one repository's entries, or all of them", async () => {
    const root = cacheRoot();
    await storeSetup(root, SHOP, "k1", setUpWorktree());
    await storeSetup(root, BLOG, "k1", setUpWorktree());
    expect(await clearSetupCache(root, { owner: "Acme", repo: "Shop" })).toBe(1);
    expect((await listEntries(root)).map((e) => e.repo)).toEqual(["acme/blog"]);
    expect(await clearSetupCache(root)).toBe(1);
    expect(await listEntries(root)).toEqual([]);
  });
});

describe("recordCacheOutcome", () => {
  it("counts every lookup when many are recorded at once, as a fleet's workers do", async () => {
    const root = tempDir("cache-stats");
    expect(await cacheStats(root)).toEqual({ hits: 0, misses: 0 });
    await Promise.all(Array.from({ length: 40 }, (_, i) => recordCacheOutcome(root, i % 4 === 0 ? "miss" : "hit")));
    expect(await cacheStats(root)).toEqual({ hits: 30, misses: 10 });
    expect(await listEntries(root)).toEqual([]);
  });
});

describe("the set-up cache and the sandbox", () => {
  it("is out of reach of every sandboxed process, whichever repository's worktree it runs in", async () => {
    const root = cacheRoot();
    await storeSetup(root, SHOP, "k1", setUpWorktree());
    const [entry] = await listEntries(root);
    const file = path.join(entry?.dir ?? "", "files", "node_modules", "greet", "index.js");
    expect(readFileSync(file, "utf8")).toBe("hello\n");

    const blog = freshWorktree();
    const script = `cat ${JSON.stringify(file)}; echo poisoned > ${JSON.stringify(file)}; ls ${JSON.stringify(root)}`;
    const result = await runSandboxed("sh", ["-c", script], {
      cwd: blog,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      timeoutMs: 10_000,
      sandbox: { mode: "bwrap" },
    });
    expect(result.stdout).toBe("");
    expect(result.all).toContain("No such file or directory");
    expect(readFileSync(file, "utf8")).toBe("hello\n");
  });
});
