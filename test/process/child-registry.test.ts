import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../dev/wait-for.ts";
import { reapOrphans } from "../../src/process/child-registry.ts";
import { processIdentity } from "../../src/process/process-identity.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { isAlive } from "../support/process-alive.ts";
import { mountSmallDisk, type SmallDisk } from "../support/small-disk.ts";

const groups: number[] = [];
let disk: SmallDisk | undefined;
afterEach(() => {
  disk?.release();
  disk = undefined;
  for (const pid of groups.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

/** A process group of its own, as Lisa starts a gate: its pid, and how it ended once it has. */
function group(): { pid: number; ended: Promise<NodeJS.Signals | null> } {
  const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
  groups.push(child.pid as number);
  return { pid: child.pid as number, ended: new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal))) };
}

describe("reapOrphans", () => {
  it("spares the children of a Lisa still alive, and a pid that is now another process", () => {
    const dir = tempDir("children");
    // This test's own process stands for a Lisa that still runs.
    const living = path.join(dir, `${process.pid}@${processIdentity(process.pid)}`);
    mkdirSync(living);
    const mine = group().pid;
    writeFileSync(path.join(living, String(mine)), processIdentity(mine) ?? "");
    // A dead Lisa's record of a pid that has since been given to another process.
    const dead = path.join(dir, "999999@gone:1");
    mkdirSync(dead);
    const stranger = group().pid;
    writeFileSync(path.join(dead, String(stranger)), "another-boot:123");

    expect(reapOrphans(dir)).toBe(0);
    expect(isAlive(mine)).toBe(true);
    expect(isAlive(stranger)).toBe(true);
    // The dead Lisa's list is cleared; the living one's is kept.
    expect(readdirSync(dir)).toEqual([path.basename(living)]);
  });

  it("kills the recorded group of a Lisa that is gone whose leader has exited since, leaving a child in it", async () => {
    const dir = tempDir("children");
    const dead = path.join(dir, "999999@gone:1");
    mkdirSync(dead);
    // An agent that started a tool in its group and ended after its Lisa was killed.
    const leader = spawn("sh", ["-c", "sleep 600 & echo $!; read line"], { detached: true, stdio: ["pipe", "pipe", "ignore"] });
    const pid = leader.pid as number;
    groups.push(pid);
    writeFileSync(path.join(dead, String(pid)), processIdentity(pid) ?? "");
    const tool = Number(
      await new Promise<string>((resolve) => leader.stdout.once("data", (data: Buffer) => resolve(String(data)))),
    );
    leader.stdin.end("\n");
    await new Promise((resolve) => leader.once("exit", resolve));
    expect(isAlive(tool)).toBe(true);
    expect(reapOrphans(dir)).toBe(1);
    await waitFor("the tool to end", () => !isAlive(tool), 3_000);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("kills the recorded group of a Lisa that is gone", async () => {
    const dir = tempDir("children");
    const dead = path.join(dir, "999999@gone:1");
    mkdirSync(dead);
    const orphan = group();
    writeFileSync(path.join(dead, String(orphan.pid)), processIdentity(orphan.pid) ?? "");
    expect(reapOrphans(dir)).toBe(1);
    expect(await orphan.ended).toBe("SIGKILL");
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("recordChild", () => {
  it("leaves a whole record or none: a write the full disk refuses leaves no empty one that the next Lisa would spare", async (context) => {
    const mount = tempDir("small-children");
    const mounted = await mountSmallDisk(mount, 1024 ** 2);
    if ("refused" in mounted) return context.skip(`no small file system can be mounted here: ${mounted.refused}`);
    disk = mounted;
    const script = fileURLToPath(new URL("../support/record-on-full-disk.ts", import.meta.url));
    const { pid, ppid } = JSON.parse(mounted.node(script, mount)) as { pid: number; ppid: number };

    const [own = ""] = readdirSync(mounted.outside(path.join(mount, "children")));
    const list = mounted.outside(path.join(mount, "children", own));
    // Recorded while the disk had room: whole. Its parent, once the disk was full: not at all.
    expect(readdirSync(list)).toEqual([String(pid)]);
    expect(readFileSync(path.join(list, String(pid)), "utf8")).toMatch(/^.+:\d+$/);
    expect(ppid).not.toBe(pid);
  });
});
