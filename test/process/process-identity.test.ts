import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processIdentity } from "../../src/process/process-identity.ts";

describe("processIdentity", () => {
  it("tells a process apart from a later one, and says nothing of one that is gone", async () => {
    const first = spawn("sleep", ["30"]);
    const second = spawn("sleep", ["30"]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const a = processIdentity(first.pid ?? 0);
    expect(a).toMatch(/^[\w-]+:\d+$/);
    expect(processIdentity(first.pid ?? 0)).toBe(a);
    expect(processIdentity(process.pid)).not.toBe(a);
    first.kill("SIGKILL");
    second.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processIdentity(first.pid ?? 0)).toBeUndefined();
  });
});
