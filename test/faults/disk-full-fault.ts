import path from "node:path";
import { processesMatching } from "../../dev/processes-matching.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { mountSmallDisk, type SmallDisk } from "../support/small-disk.ts";
import type { FaultScenario, FaultWorld } from "./fault-world.ts";

// Lisa's data directory (store, mirrors, worktrees) on a file system of its own, small enough to
// fill: the fault fills it to the last byte. The run must fail with a comment that says so, Lisa
// must stay up (and start again, if restarted onto the full disk), and once the space is freed
// `/lisa retry` must deliver. Where no mount namespace is allowed, the disk never fills, and the
// scenario says so.

/** The gate the first fault fills the disk under; its number finds it among the host's processes. */
const GATE = "sleep 1.529 && test -f health.ts";
const DISK_BYTES = 24 * 1024 ** 2;

interface DiskFull {
  name: string;
  what: string;
  /** Fills the disk at the fault's moment. */
  fillWhen(world: FaultWorld, fill: () => void): Promise<unknown>;
  /** Lisa is killed once the run failed and started again on the disk still full, as a supervisor would. */
  restartFull?: boolean;
}

function diskFull(fault: DiskFull): FaultScenario {
  let disk: SmallDisk | undefined;
  return {
    name: fault.name,
    what: fault.what,
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
        console.log(`${fault.name}: no small file system can be mounted here, so the disk does not fill (${mounted.refused})`);
        return undefined;
      }
      disk = mounted;
      return mounted;
    },
    async inflict(world) {
      const filling = disk;
      if (!filling) return;
      await fault.fillWhen(world, () => filling.fill());
      let lisa = world.lisa();
      const exited = () => lisa.exitCode !== null || lisa.signalCode !== null;
      await waitFor("the run to fail, or Lisa to exit", () => exited() || world.tracking().includes("❌ Failed"), 60_000);
      if (exited()) throw new Error(`Lisa exited (${lisa.exitCode ?? lisa.signalCode}) when its data disk filled`);
      if (!world.tracking().includes("Lisa's data disk is full"))
        throw new Error(`the issue does not say that the data disk is full:\n${world.tracking()}`);
      if (fault.restartFull) {
        await world.kill();
        await world.restart();
        lisa = world.lisa();
        // Long enough for a start-up that fails on the full disk to have exited.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        if (exited()) throw new Error(`Lisa, started again on its full data disk, exited (${lisa.exitCode ?? lisa.signalCode})`);
      }
      filling.free();
      await world.github.commentOnIssue(world.repo, world.issue, "/lisa retry", "ann");
    },
  };
}

export const DISK_FULL_FAULTS: FaultScenario[] = [
  diskFull({
    name: "disk-full-mid-gate",
    what: "the data disk (a 24 MB file system) filled while a gate runs; space freed, then /lisa retry",
    fillWhen: async (_world, fill) => {
      await waitFor("the gate to run", () => processesMatching("sleep 1.529").length > 0 || undefined, 60_000);
      fill();
    },
  }),
  diskFull({
    name: "disk-full-restart",
    what: "the data disk filled at Lisa's 3rd write to GitHub, Lisa restarted onto the full disk; space freed, then /lisa retry",
    restartFull: true,
    fillWhen: (world, fill) => world.afterWrite(3, fill),
  }),
];
