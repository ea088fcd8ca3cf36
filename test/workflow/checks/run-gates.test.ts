import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { processesMatching } from "../../../dev/processes-matching.ts";
import { REDACTED } from "../../../src/markdown/redact-secrets.ts";
import { runGates } from "../../../src/workflow/checks/run-gates.ts";
import { createRemote, gitIn, tempDir } from "../../support/git-fixtures.ts";
import { isAlive } from "../../support/process-alive.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const options = (cwd: string) => ({ cwd, env, timeoutMs: 10_000, secrets: [] as string[] });
const uniqueSleep = () => `600.${process.pid}${Math.floor(Math.random() * 1e6)}`;

async function gone(pids: number[]): Promise<number[]> {
  for (let i = 0; i < 40 && pids.some(isAlive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.filter(isAlive);
}

/** A mirror with one commit on `main` and a worktree of it on `lisa/1`, the way Lisa lays a step out. */
function stepWorktree(): { mirror: string; worktree: string } {
  const mirror = createRemote(tempDir("mirrors"), "acme/api", "main", { "README.md": "# API\n" });
  const worktree = path.join(tempDir("worktrees"), "run-1-step-1");
  gitIn(mirror, "worktree", "add", "--quiet", "-b", "lisa/1", worktree, "main");
  return { mirror, worktree };
}

describe("runGates", () => {
  it("runs every gate in the worktree and passes when all exit 0", async () => {
    const cwd = tempDir("gates");
    writeFileSync(path.join(cwd, "README.md"), "# Hello World\n");
    const results = await runGates(["grep -q 'Hello World' README.md", "echo checked"], options(cwd));
    expect(results.map(({ command, passed, output }) => ({ command, passed, output }))).toEqual([
      { command: "grep -q 'Hello World' README.md", passed: true, output: "" },
      { command: "echo checked", passed: true, output: "checked\n" },
    ]);
  });

  it("stops at the first failing gate and keeps its output, both streams", async () => {
    const results = await runGates(
      ["true", "echo to-stdout; echo to-stderr >&2; exit 2", "echo never"],
      options(tempDir("gates")),
    );
    expect(results.map((r) => r.passed)).toEqual([true, false]);
    expect(results[1]?.output).toContain("to-stdout\n");
    expect(results[1]?.output).toContain("to-stderr\n");
  });

  it("keeps only the tail of long output, with known secrets and secret shapes redacted", async () => {
    const token = "installation-token-value-1234";
    const results = await runGates(
      [`seq 1 5000; echo "token=${token}"; echo "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz"; exit 1`],
      { ...options(tempDir("gates")), secrets: [token] },
    );
    const output = results[0]?.output ?? "";
    expect(output.length).toBeLessThanOrEqual(6_000 + 20);
    expect(output).not.toContain("\n1\n2\n3\n");
    expect(output).toContain("4999\n5000\n");
    expect(output).toContain(`token=${REDACTED}`);
    expect(output).not.toContain(token);
    expect(output).not.toContain("sk-ant-api03");
  });

  it("stops a gate at gate_timeout, children included: `sleep 25` with a 2 s limit", async () => {
    const started = Date.now();
    const results = await runGates(["sleep 25"], { ...options(tempDir("gates")), timeoutMs: 2_000 });
    const took = Date.now() - started;
    expect(results[0]?.passed).toBe(false);
    expect(results[0]?.output).toContain("[Lisa stopped this gate after 2s]");
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(took).toBeLessThan(5_000);
  });

  it.each([
    ["a child that ignores SIGTERM", (sleep: string) => `trap '' TERM; sleep ${sleep} & while :; do sleep 0.2; done`],
    ["a grandchild that holds stdout", (sleep: string) => `sh -c 'sleep ${sleep}' & wait`],
    ["a `setsid` grandchild that holds stdout", (sleep: string) => `setsid sleep ${sleep} & wait`],
  ])("holds gate_timeout against %s, and ends it", async (_name, gate) => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const results = await runGates([gate(sleep)], { ...options(tempDir("gates")), timeoutMs: 1_000 });
    expect(results[0]?.passed).toBe(false);
    expect(Date.now() - started).toBeLessThan(4_500);
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it.each([
    ["at gate_timeout", (sleep: string) => `setsid sleep ${sleep} & wait`, false],
    [
      "when the gate exits and leaves it running",
      (sleep: string) => `setsid sleep ${sleep} > /dev/null 2>&1 & sleep 0.5; exit 0`,
      true,
    ],
  ])("ends a `setsid` child with the sandbox off too, %s", async (_when, gate, passes) => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const results = await runGates([gate(sleep)], { ...options(tempDir("gates")), timeoutMs: 1_000, sandbox: { mode: "off" } });
    expect(results[0]?.passed).toBe(passes);
    expect(Date.now() - started).toBeLessThan(4_500);
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("runs in the sandbox: Lisa's files and processes are out of sight", async () => {
    const lisaFile = path.join(process.cwd(), "package.json");
    const results = await runGates(
      [`test -r /proc/1/cmdline`, `test ! -e '${lisaFile}'`, `! cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -q "[v]itest"`],
      options(tempDir("gates")),
    );
    expect(results.map((r) => r.passed)).toEqual([true, true, true]);
  });

  it("runs the same gates as Lisa's own user when the sandbox is off", async () => {
    const lisaFile = path.join(process.cwd(), "package.json");
    const results = await runGates([`test -e '${lisaFile}'`], { ...options(tempDir("gates")), sandbox: { mode: "off" } });
    expect(results[0]?.passed).toBe(true);
  });

  it("can use git in a step's worktree when given the step's mirror", async () => {
    const { mirror, worktree } = stepWorktree();
    const identity = "GIT_AUTHOR_NAME=g GIT_AUTHOR_EMAIL=g@example.com GIT_COMMITTER_NAME=g GIT_COMMITTER_EMAIL=g@example.com";
    const results = await runGates(
      [
        "git status --porcelain",
        `echo change > new.txt && git add new.txt && ${identity} git commit -q -m gate && git log --oneline -1`,
      ],
      { ...options(worktree), sandbox: { mode: "bwrap", mirrors: [mirror] } },
    );
    expect(results.map((r) => [r.passed, r.output])).toEqual([
      [true, ""],
      [true, expect.stringMatching(/^[0-9a-f]+ gate\n$/)],
    ]);
    expect(gitIn(worktree, "log", "--format=%s", "-1")).toBe("gate\n");
  });
});
