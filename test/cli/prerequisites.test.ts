import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript, so that an old Node.js can run it and say what it lacks.
import { missingPrerequisites } from "../../scripts/prerequisites.mjs";
import { tempDir } from "../support/git-fixtures.ts";

const SCRIPT = fileURLToPath(new URL("../../scripts/prerequisites.mjs", import.meta.url));

/** A folder for PATH holding `bwrap`: one that answers --version and, asked for namespaces, says `refusal`. */
function fakeBwrap(refusal: string): string {
  const bin = tempDir("fake-bwrap");
  writeFileSync(
    path.join(bin, "bwrap"),
    `#!/bin/sh\nif [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\necho "${refusal}" >&2\nexit 1\n`,
  );
  chmodSync(path.join(bin, "bwrap"), 0o755);
  return bin;
}

/** Runs the script as npm runs it before a command, from `cwd`, with only `env`. */
const check = (args: string[], env: Record<string, string>, cwd = tempDir("prerequisites")) =>
  spawnSync(process.execPath, [SCRIPT, ...args], { cwd, env, encoding: "utf8" });

describe("the prerequisites checked before npm start, demo, test and check", () => {
  it("names an old Node.js, a missing bubblewrap and one that cannot make namespaces, each with how to get it", () => {
    const missing = missingPrerequisites({ nodeVersion: "20.20.2", sandbox: "missing", platform: "linux" }) as string[];
    expect(missing).toEqual([
      expect.stringMatching(/^Node\.js 22\.20 or newer \(this is 20\.20\.2\): install the current LTS .*\.nvmrc/),
      expect.stringMatching(/^bubblewrap \(`bwrap`\), the agents' sandbox: `sudo apt-get install bubblewrap`/),
    ]);
    expect(missingPrerequisites({ nodeVersion: "22.19.0", sandbox: "works", platform: "linux" })).toHaveLength(1);
    expect(missingPrerequisites({ nodeVersion: "22.20.0", sandbox: "works", platform: "linux" })).toEqual([]);
    expect(missingPrerequisites({ nodeVersion: "24.1.0", sandbox: "works", platform: "darwin" })).toEqual([
      expect.stringMatching(/^Linux \(this is darwin\)/),
    ]);
    expect(
      missingPrerequisites({ nodeVersion: "24.1.0", sandbox: "setting up uid map: Permission denied", platform: "linux" }),
    ).toEqual([
      expect.stringMatching(
        /^a bubblewrap that can make namespaces: `bwrap` is installed but refused \(setting up uid map: Permission denied\)/,
      ),
    ]);
  });

  it("stops with that list where bwrap is not on PATH", () => {
    const result = check([], { PATH: "/nonexistent" });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^Lisa needs, and this machine lacks:\n {2}- bubblewrap/);
  });

  it("does not take a bwrap that answers --version but cannot make the sandbox's namespaces", () => {
    const result = check([], { PATH: fakeBwrap("bwrap: No permissions to create new namespace") });
    expect(result.stderr).toContain(
      "a bubblewrap that can make namespaces: `bwrap` is installed but refused (bwrap: No permissions to create new namespace)",
    );
    expect(result.status).toBe(1);
  });

  it("lets npm start and the demo run unsandboxed with LISA_SANDBOX=off, from the environment or .env, and says so as the way out", () => {
    const refused = check(["--sandbox-optional"], { PATH: "/nonexistent" });
    expect(refused.stderr).toContain("Or run agents unsandboxed with LISA_SANDBOX=off");
    expect(refused.status).toBe(1);
    expect(check(["--sandbox-optional"], { PATH: "/nonexistent", LISA_SANDBOX: "off" }).status).toBe(0);
    const dir = tempDir("prerequisites");
    writeFileSync(path.join(dir, ".env"), "APP_ID=1\nLISA_SANDBOX=off # no bubblewrap on this laptop\n");
    expect(check(["--sandbox-optional"], { PATH: "/nonexistent" }, dir).status).toBe(0);
    // The test suite runs the real sandbox whatever the setting.
    expect(check([], { PATH: "/nonexistent", LISA_SANDBOX: "off" }).status).toBe(1);
  });

  it("runs before each of the README's commands, the sandbox optional only where Lisa honours LISA_SANDBOX=off", () => {
    const { scripts } = JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8"));
    for (const name of ["start", "demo"])
      expect(scripts[`pre${name}`], name).toBe("node scripts/prerequisites.mjs --sandbox-optional");
    for (const name of ["test", "check"]) expect(scripts[`pre${name}`], name).toBe("node scripts/prerequisites.mjs");
  });
});
