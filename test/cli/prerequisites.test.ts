import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript, so that an old Node.js can run it and say what it lacks.
import { missingPrerequisites } from "../../scripts/prerequisites.mjs";

const SCRIPT = fileURLToPath(new URL("../../scripts/prerequisites.mjs", import.meta.url));

describe("the prerequisites checked before npm start, demo, test and check", () => {
  it("names an old Node.js and a missing bubblewrap, each with how to get it", () => {
    const missing = missingPrerequisites({ nodeVersion: "20.20.2", hasBwrap: false, platform: "linux" }) as string[];
    expect(missing).toEqual([
      expect.stringMatching(/^Node\.js 22\.18 or newer \(this is 20\.20\.2\): install the current LTS .*\.nvmrc/),
      expect.stringMatching(/^bubblewrap \(`bwrap`\), the agents' sandbox: `sudo apt-get install bubblewrap`/),
    ]);
    expect(missingPrerequisites({ nodeVersion: "22.17.1", hasBwrap: true, platform: "linux" })).toHaveLength(1);
    expect(missingPrerequisites({ nodeVersion: "22.18.0", hasBwrap: true, platform: "linux" })).toEqual([]);
    expect(missingPrerequisites({ nodeVersion: "24.1.0", hasBwrap: true, platform: "darwin" })).toEqual([
      expect.stringMatching(/^Linux \(this is darwin\)/),
    ]);
  });

  it("stops with that list where bwrap is not on PATH", () => {
    const result = spawnSync(process.execPath, [SCRIPT], { env: { PATH: "/nonexistent" }, encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^Lisa needs, and this machine lacks:\n {2}- bubblewrap/);
  });

  it("runs before each of the README's commands", () => {
    const { scripts } = JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8"));
    for (const name of ["start", "demo", "test", "check"])
      expect(scripts[`pre${name}`], name).toBe("node scripts/prerequisites.mjs");
  });
});
