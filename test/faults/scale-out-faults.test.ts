import { describe, expect, it } from "vitest";
import type { FaultCounts } from "./fault-world.ts";
import { SCALE_OUT_FAULTS } from "./scale-out-catalog.ts";
import { sufferScaleOutFault } from "./scale-out-world.ts";

// Each fault of ./scale-out-catalog.ts against `lisa web` and two `lisa worker`s on PostgreSQL
// (./scale-out-world.ts), counted as the single-process faults are.

const HELD: FaultCounts = { lostRuns: 0, duplicatePrs: 0, duplicateComments: 0, orphans: 0, staleWorktrees: 0, githubBehind: 0 };

/** Scenarios at a time: each runs three Lisa processes, and a worker starved past its lease loses its claims. */
const AT_ONCE = 2;
let running = 0;
const waiting: (() => void)[] = [];

/** Runs `work` once fewer than AT_ONCE others run. */
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  while (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

describe.concurrent("scale-out faults", () => {
  it.each(SCALE_OUT_FAULTS)(
    "Lisa scaled out recovers from $what ($name)",
    async (scenario) => {
      expect(await inTurn(() => sufferScaleOutFault(scenario))).toEqual(HELD);
    },
    // The time waiting for a turn counts too.
    900_000,
  );
});
