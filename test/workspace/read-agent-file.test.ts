import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readAgentFile } from "../../src/workspace/read-agent-file.ts";
import { tempDir } from "../support/git-fixtures.ts";

describe("readAgentFile", () => {
  const dir = tempDir("agent-files");

  it("reads a regular file, and says there is none when nothing is there", async () => {
    writeFileSync(path.join(dir, "plan.json"), '{"steps": []}');
    await expect(readAgentFile(path.join(dir, "plan.json"), 1024)).resolves.toBe('{"steps": []}');
    await expect(readAgentFile(path.join(dir, "absent.json"), 1024)).resolves.toBeUndefined();
  });

  it("refuses a symbolic link without reading what it points at", async () => {
    symlinkSync("/etc/passwd", path.join(dir, "link.json"));
    const read = readAgentFile(path.join(dir, "link.json"), 1024);
    await expect(read).rejects.toThrow("link.json is a symbolic link");
    await expect(read).rejects.not.toThrow(/root:/);
  });

  it("refuses a FIFO at once instead of waiting for a writer", async () => {
    execFileSync("mkfifo", [path.join(dir, "fifo.json")]);
    await expect(readAgentFile(path.join(dir, "fifo.json"), 1024)).rejects.toThrow("fifo.json is not a regular file (a FIFO)");
  });

  it("refuses a directory", async () => {
    mkdirSync(path.join(dir, "dir.json"));
    await expect(readAgentFile(path.join(dir, "dir.json"), 1024)).rejects.toThrow("dir.json is not a regular file (a directory)");
  });

  it("refuses a file over the limit", async () => {
    writeFileSync(path.join(dir, "big.json"), "x".repeat(300 * 1024));
    await expect(readAgentFile(path.join(dir, "big.json"), 256 * 1024)).rejects.toThrow(
      "big.json is larger than 256 KiB (300 KiB)",
    );
  });
});
