import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../support/git-fixtures.ts";
import { mountSmallDisk, type SmallDisk } from "../support/small-disk.ts";

// The catch that records a refused tracking edit as owed writes to the store; on a full data disk
// that write fails too, and it threw out of the catch (issue 22, item 5). The store runs where the
// small disk is mounted (SQLite resolves /proc/<pid>/root back to this process's own root).

const SCRIPT = fileURLToPath(new URL("../support/publish-on-full-disk.ts", import.meta.url));

let disk: SmallDisk | undefined;
afterEach(() => {
  disk?.release();
  disk = undefined;
});

describe("publishTracking on a full data disk", () => {
  it("logs that it could not record the refused edit as owed, and does not throw", async (context) => {
    const mount = tempDir("small-store");
    const mounted = await mountSmallDisk(mount, 4 * 1024 ** 2);
    if ("refused" in mounted) return context.skip(`no small file system can be mounted here: ${mounted.refused}`);
    disk = mounted;
    const outcome = JSON.parse(mounted.node(SCRIPT, mount));
    expect(outcome).toEqual({
      write: "database or disk is full",
      said: [
        "could not update the tracking comment; it is written again later",
        "the data disk is full: could not record the tracking edit as owed",
      ],
      threw: null,
    });
  });
});
