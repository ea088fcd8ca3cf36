import path from "node:path";
import { processesMatching } from "../../dev/processes-matching.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { mountSmallDisk, type SmallDisk } from "../support/small-disk.ts";
import type { FaultScenario } from "./fault-world.ts";

// Lisa's data directory (store, mirrors, worktrees) on a file system of its own, small enough to
// fill: the fault fills it to the last byte while a gate runs. The run must fail with a comment
// that says so, Lisa must stay up, and once the space is freed `/lisa retry` must deliver.

/** The gate the disk fills under; its number finds it among the host's processes. */
const GATE = "sleep 1.529 && test -f health.ts";
const DISK_BYTES = 24 * 1024 ** 2;

/** A data disk that fills while a gate runs; freed, then `/lisa retry`. Without a mount namespace here, the disk never fills, and it says so. */
export function diskFullFault(): FaultScenario {
  let disk: SmallDisk | undefined;
  return {
    name: "disk-full-mid-gate",
    what: "the data disk (a 24 MB file system) filled while a gate runs; space freed, then /lisa retry",
    invocations: [
      {
        write: { "health.ts": "export const health = () => 'ok';\n" },
        manifest: { title: "Add a health check", what: "health() answers ok." },
      },
    ],
    config: `label: lisa\ngates:\n  - ${GATE}\n`,
    async dataDisk(dataDir) {
      // On the folder above, so the holder's command line does not name the data directory (orphans are counted by it).
      const mounted = await mountSmallDisk(path.dirname(dataDir), DISK_BYTES);
      if ("refused" in mounted) {
        console.log(
          `disk-full-mid-gate: no small file system can be mounted here, so the disk does not fill (${mounted.refused})`,
        );
        return undefined;
      }
      disk = mounted;
      return mounted;
    },
    async inflict(world) {
      await waitFor("the gate to run", () => processesMatching("sleep 1.529").length > 0 || undefined, 60_000);
      if (!disk) return;
      disk.fill();
      const lisa = world.lisa();
      const exited = () => lisa.exitCode !== null || lisa.signalCode !== null;
      await waitFor("the run to fail, or Lisa to exit", () => exited() || world.tracking().includes("❌ Failed"), 60_000);
      if (exited()) throw new Error(`Lisa exited (${lisa.exitCode ?? lisa.signalCode}) when its data disk filled`);
      if (!world.tracking().includes("Lisa's data disk is full"))
        throw new Error(`the issue does not say that the data disk is full:\n${world.tracking()}`);
      disk.free();
      await world.github.commentOnIssue(world.repo, world.issue, "/lisa retry", "ann");
    },
  };
}
