import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const json = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), "utf8"));

// npm 11 asks that every dependency's install script be approved or denied in package.json's
// allowScripts; without it each `npm install` ends with a warning, printed twice by `npm install`
// here (Lisa's own packages, then the agent CLIs of agents/). Each of these scripts is needed: the
// embedded PostgreSQL links its libraries, Claude Code and OpenCode pick their platform's binary,
// and Gemini CLI's keytar and node-pty build their native parts.
describe("the install scripts of Lisa's dependencies", () => {
  it.each([
    ["package.json", "package-lock.json", ROOT],
    ["agents/package.json", "agents/package-lock.json", path.join(ROOT, "agents")],
  ])("are each reviewed in %s's allowScripts, for every platform the lockfile lists", (manifest, lockfile, dir) => {
    const { allowScripts = {} } = json(manifest) as { allowScripts?: Record<string, boolean> };
    const { packages } = json(lockfile) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(packages)
      .filter(([at, entry]) => at !== "" && entry.hasInstallScript)
      .map(([at]) => at.slice(at.lastIndexOf("node_modules/") + "node_modules/".length));
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((name) => allowScripts[name] === undefined)).toEqual([]);
    // And npm itself, on what is installed here, has nothing left to warn about.
    const ls = spawnSync("npm", ["install-scripts", "ls"], { cwd: dir, encoding: "utf8" });
    expect(ls.stdout.trim(), ls.stderr).toBe("No packages with unreviewed install scripts.");
  });
});
