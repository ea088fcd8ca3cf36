import { execFile } from "node:child_process";
import { chmodSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/git-fixtures.ts";

const DEMO = fileURLToPath(new URL("../../scripts/demo.ts", import.meta.url));

describe("npm run demo", () => {
  it("plans two repositories with the real Claude Code CLI, goes round a second pass after a review, and ends accepted", async () => {
    const temp = tempDir("demo-tmp");
    const { stdout } = await promisify(execFile)(process.execPath, ["--disable-warning=ExperimentalWarning", DEMO], {
      timeout: 170_000,
      env: { ...process.env, TMPDIR: temp },
    });
    // Nothing of the demo's is left in the temp directory: no emulated repositories, no Lisa data.
    expect(readdirSync(temp).filter((name) => name.startsWith("lisa-"))).toEqual([]);
    // The pull requests' commits are shown, as their repositories go with the demo's folder.
    expect(stdout).toMatch(/— branch lisa\/1-[\w-]+, its commits:\n {6}[0-9a-f]{7,} /);
    expect(stdout).toContain("Pass 1 is ready for review. Two linked pull requests:");
    expect(stdout).toMatch(/demo\/api#\d+ "Add a \/health endpoint" — branch lisa\/1-/);
    // In another repository than the issue's, the branch names the issue's repository.
    expect(stdout).toMatch(/demo\/web#\d+ "Show the API's health on the page" — branch lisa\/api-1-/);
    expect(stdout).toMatch(/- Step 2, `demo\/web`: http:\/\/127\.0\.0\.1:\d+\/demo\/web\/pull\/\d+/);
    expect(stdout).toContain("👀 Ready for review");
    // demo/web's CI fails on pass 1's first push, and the session Lisa starts with its report fixes it.
    expect(stdout).toContain("demo/web's CI (html-lint) on each head Lisa pushed in pass 1: failure → success");
    expect(stdout).toMatch(/Pass 2's review package on demo\/web#\d+:/);
    expect(stdout).toContain("Make the status bold");
    // Steering: a redirect said while pass 2's session runs reaches it, and pass 2's package accounts for it.
    expect(stdout).toContain("Taken into pass 2 while it runs: the running claude session reads it now.");
    // Watching: the reviewer reads the live check run of pass 2's session.
    expect(stdout).toMatch(/watches the session in demo\/web#\d+'s "Lisa" check run \(Pass 2: claude is working/);
    expect(stdout).toMatch(/\*\*Session\*\* \d+, revising · \*\*Provider\*\* `claude`/);
    expect(stdout).toMatch(/Pass 2's review package[\s\S]*Also show when it was last checked[\s\S]*Accepted\./);
    expect(stdout).toMatch(/Accepted\. The final report on demo\/api#\d+:/);
    expect(stdout).toContain("✅ Accepted");
    // What a reader of GitHub sees: no HTML markers of Lisa's, in the pull request's body or anywhere.
    expect(stdout).not.toContain("<!--");
    // One learning carried from the first issue into the second: proposed, merged, then in the prompt.
    // The memory file starts with it: the review's opening words ("Almost: …") taught nothing.
    expect(stdout).toMatch(
      /into every agent's prompt\.\n {4}\n {4}- Make the status bold, and refresh it every 30 seconds\. \(@maintainer, demo\/api#1\)\n/,
    );
    expect(stdout).not.toMatch(/^ {4}- Almost: one thing on the page\./m);
    expect(stdout).toMatch(
      /The learning carried into demo\/api#3's session on demo\/web, in its prompt:\n {4}- Make the status bold, and refresh it every 30 seconds\. \(@maintainer, demo\/api#1\)/,
    );
    // Seven sessions of the real CLI, each several seconds on a busy machine, and a model that takes its time in pass 2.
  }, 180_000);

  it("says only what it saw when the sandbox cannot start: no pull request, no fix it did not see, and where to look", async () => {
    // A bwrap that answers --version, as a prerequisites check of old took for a working one, but makes no namespaces.
    const bin = tempDir("fake-bwrap");
    writeFileSync(
      path.join(bin, "bwrap"),
      '#!/bin/sh\nif [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
    );
    chmodSync(path.join(bin, "bwrap"), 0o755);
    const demo = await promisify(execFile)(process.execPath, ["--disable-warning=ExperimentalWarning", DEMO], {
      timeout: 170_000,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    }).then(
      () => ({ stdout: "", stderr: "the demo passed", code: 0 }),
      (error: { stdout: string; stderr: string; code: number }) => error,
    );
    expect(demo.code).toBe(1);
    expect(demo.stdout).toContain("Lisa cannot start its sandbox for agents");
    expect(demo.stderr).toContain("Lisa opened 0 pull request(s), not two: the tracking comment above says why.");
    expect(demo.stdout).not.toContain("which fixed it");
    expect(demo.stdout).not.toContain("ready for review");
  }, 180_000);
});
