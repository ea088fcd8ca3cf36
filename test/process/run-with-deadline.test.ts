import { afterEach, describe, expect, it } from "vitest";
import { processesMatching } from "../../dev/processes-matching.ts";
import { clampTimer, MAX_LINE, MAX_TIMER_MS, runWithDeadline } from "../../src/process/run-with-deadline.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { isAlive } from "../support/process-alive.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
/** A `sleep` whose duration no other process on the host has, so the test can find it by its command line. */
const uniqueSleep = () => `600.${process.pid}${Math.floor(Math.random() * 1e6)}`;
const run = (script: string, options: { timeoutMs: number; stallMs?: number; graceMs?: number; sweep?: boolean }) =>
  runWithDeadline("sh", ["-c", script], { cwd: tempDir("deadline"), env, ...options });

async function gone(pids: number[]): Promise<number[]> {
  // A killed process disappears once its parent (or init) has reaped it, which takes a moment.
  for (let i = 0; i < 40 && pids.some(isAlive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.filter(isAlive);
}

const escaped: number[] = [];
afterEach(() => {
  for (const pid of escaped.splice(0)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
});

describe("runWithDeadline", () => {
  it("returns what the process printed and its exit code", async () => {
    const result = await run("echo out; echo err >&2; exit 3", { timeoutMs: 5_000 });
    expect(result).toMatchObject({ stdout: "out\n", stderr: "err\n", exitCode: 3, ending: "exited" });
    expect(result.all).toMatch(/out\n[\s\S]*err\n|err\n[\s\S]*out\n/);
  });

  it("writes the input to standard input", async () => {
    const result = await runWithDeadline("cat", [], { cwd: tempDir("deadline"), env, input: "the prompt", timeoutMs: 5_000 });
    expect(result.stdout).toBe("the prompt");
  });

  it("reports a program that does not exist as not spawned", async () => {
    const result = await runWithDeadline("/nonexistent/tool", [], { cwd: tempDir("deadline"), env, timeoutMs: 5_000 });
    expect(result.ending).toBe("spawn_failed");
    expect(result.spawnError?.code).toBe("ENOENT");
  });

  it("kills a child that ignores SIGTERM, and everything in its group, a grace after the deadline", async () => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const result = await run(`trap '' TERM; sleep ${sleep} & echo started; wait`, { timeoutMs: 1_000, graceMs: 500 });
    const took = Date.now() - started;
    expect(result.ending).toBe("timeout");
    expect(result.stdout).toBe("started\n");
    expect(took).toBeGreaterThanOrEqual(1_400);
    expect(took).toBeLessThan(3_000);
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("does not wait for a grandchild that holds stdout open after the child exits, and kills it", async () => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const result = await run(`sleep ${sleep} & echo done`, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ ending: "exited", exitCode: 0, stdout: "done\n" });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("holds the deadline when a grandchild in the group keeps stdout open", async () => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const result = await run(`sleep ${sleep} & wait`, { timeoutMs: 1_000 });
    expect(result.ending).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("holds the deadline when a `setsid` grandchild escapes the group and keeps stdout open", async () => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const result = await run(`setsid sleep ${sleep} & echo started; wait`, { timeoutMs: 1_000, graceMs: 500 });
    expect(result.ending).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_500);
    // Outside a sandbox only the deadline holds: the escaped process lives on. Lisa's sandbox ends
    // it with its PID namespace (test/sandbox, test/security).
    const survivors = processesMatching(`sleep ${sleep}`);
    escaped.push(...survivors);
    expect(survivors).toHaveLength(1);
  });

  it("with `sweep`, ends the `setsid` grandchild too, at the deadline and after a clean exit", async () => {
    const atDeadline = uniqueSleep();
    const timedOut = await run(`setsid sleep ${atDeadline} & echo started; wait`, {
      timeoutMs: 1_000,
      graceMs: 500,
      sweep: true,
    });
    expect(timedOut.ending).toBe("timeout");
    expect(await gone(processesMatching(`sleep ${atDeadline}`))).toEqual([]);
    const leftBehind = uniqueSleep();
    const exited = await run(`setsid sleep ${leftBehind} > /dev/null 2>&1 & sleep 0.5; echo started`, {
      timeoutMs: 10_000,
      sweep: true,
    });
    expect(exited.ending).toBe("exited");
    expect(await gone(processesMatching(`sleep ${leftBehind}`))).toEqual([]);
  });

  it("kills a process that prints nothing for the stall deadline, and restarts that deadline on output", async () => {
    const started = Date.now();
    const result = await run("for i in 1 2 3 4 5 6; do echo tick; sleep 0.1; done; sleep 600", {
      timeoutMs: 30_000,
      // Seconds, not a few hundred ms: on a loaded machine a tick may come late, and must not stall it.
      stallMs: 2_000,
      graceMs: 200,
    });
    expect(result.ending).toBe("stalled");
    expect(result.stdout).toBe("tick\n".repeat(6));
    // A deadline that did not restart on output would have ended it 2 s after the start.
    expect(Date.now() - started).toBeGreaterThan(2_500);
  });

  it("tells each stdout line as it arrives, before the process ends, whole across chunk and character boundaries", async () => {
    const seen: { line: string; at: number }[] = [];
    const started = Date.now();
    // "é" is split across two writes, and the second line arrives in two pieces.
    const script = String.raw`printf 'first\n'; sleep 0.6; printf '\303'; printf '\251t\nsec'; printf 'ond\n'; echo err >&2; printf 'tail'`;
    const result = await runWithDeadline("sh", ["-c", script], {
      cwd: tempDir("deadline"),
      env,
      timeoutMs: 5_000,
      onLine: (line) => seen.push({ line, at: Date.now() - started }),
    });
    expect(seen.map((s) => s.line)).toEqual(["first", "ét", "second", "tail"]);
    expect(result.durationMs - (seen[0]?.at ?? Infinity)).toBeGreaterThan(400);
  });

  it("cuts an endless line and survives a callback that throws", async () => {
    const lines: number[] = [];
    const result = await runWithDeadline("sh", ["-c", "head -c 700000 /dev/zero | tr '\\0' x; echo; echo next"], {
      cwd: tempDir("deadline"),
      env,
      timeoutMs: 5_000,
      onLine: (line) => {
        lines.push(line.length);
        throw new Error("a broken listener");
      },
    });
    expect(lines).toEqual([MAX_LINE, 4]);
    expect(result).toMatchObject({ exitCode: 0, ending: "exited" });
    expect(result.stdout.length).toBe(700_006);
  });

  it("holds the deadline with a line listener when a `setsid` grandchild keeps stdout open mid-line", async () => {
    const sleep = uniqueSleep();
    const lines: string[] = [];
    const started = Date.now();
    const result = await runWithDeadline("sh", ["-c", `printf 'half a line'; setsid sleep ${sleep} & wait`], {
      cwd: tempDir("deadline"),
      env,
      timeoutMs: 1_000,
      graceMs: 500,
      onLine: (line) => lines.push(line),
    });
    expect(result.ending).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(lines).toEqual(["half a line"]);
    escaped.push(...processesMatching(`sleep ${sleep}`));
  });

  it("keeps the newest output when a stream exceeds maxBuffer", async () => {
    const result = await runWithDeadline("sh", ["-c", "seq 1 20000"], {
      cwd: tempDir("deadline"),
      env,
      timeoutMs: 5_000,
      maxBuffer: 1_000,
    });
    expect(result.stdout.endsWith("19999\n20000\n")).toBe(true);
    expect(result.stdout.length).toBeLessThan(70_000);
    expect(result.stdout).not.toContain("\n2\n");
  });
});

describe("clampTimer", () => {
  it.each([
    [1_000, 1_000],
    [-5, 0],
    [Number.NaN, 0],
    [60 * 24 * 3600 * 1000, MAX_TIMER_MS],
    [Number.POSITIVE_INFINITY, MAX_TIMER_MS],
  ])("turns %s ms into a delay setTimeout honours, %s", (ms, expected) => {
    expect(clampTimer(ms)).toBe(expected);
  });

  it("keeps a 60-day deadline from firing at once", async () => {
    const started = Date.now();
    const result = await run("sleep 0.3; echo finished", { timeoutMs: 60 * 24 * 3600 * 1000 });
    expect(result).toMatchObject({ ending: "exited", stdout: "finished\n" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});
