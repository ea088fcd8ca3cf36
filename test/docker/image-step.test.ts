import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/git-fixtures.ts";

const IMAGE_STEP = fileURLToPath(new URL("../../scripts/image.ts", import.meta.url));

/** A folder for PATH with these programs, each a shell script. */
function fakeBin(programs: Record<string, string>): string {
  const bin = tempDir("image-bin");
  for (const [name, script] of Object.entries(programs)) {
    writeFileSync(path.join(bin, name), `#!/bin/sh\n${script}\n`);
    chmodSync(path.join(bin, name), 0o755);
  }
  return bin;
}

const runStep = (bin: string) =>
  spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", IMAGE_STEP], {
    env: { PATH: `${bin}:${path.dirname(process.execPath)}` },
    encoding: "utf8",
  });

// npm run image builds and runs the image for real (CI runs it); what it does where it cannot is tested here.
describe("npm run image where it cannot run", () => {
  it("names what is missing and how to install it", () => {
    const result = runStep(fakeBin({ mmdebstrap: "exit 0" }));
    expect(result.stderr).toBe("npm run image needs podman: apt-get install podman runc mmdebstrap\n");
    expect(result.status).toBe(1);
  });

  it("says podman cannot run the image on a machine that refuses user namespaces, and exits 1", () => {
    const bin = fakeBin({
      podman: "exit 0",
      mmdebstrap: "exit 0",
      unshare: 'echo "unshare: unshare failed: Operation not permitted" >&2; exit 1',
    });
    const result = runStep(bin);
    expect(result.stderr).toBe(
      "npm run image: podman cannot run the image here: this machine refuses user namespaces (unshare --user: unshare: unshare failed: Operation not permitted).\n",
    );
    expect(result.status).toBe(1);
  });
});
