import { describe, expect, it } from "vitest";
import type { FaultCounts } from "./fault-world.ts";
import { SCALE_OUT_FAULTS } from "./scale-out-catalog.ts";
import { sufferScaleOutFault } from "./scale-out-world.ts";

// Each fault of ./scale-out-catalog.ts against `lisa web` and two `lisa worker`s on PostgreSQL
// (./scale-out-world.ts), counted as the single-process faults are.

const HELD: FaultCounts = { lostRuns: 0, duplicatePrs: 0, duplicateComments: 0, orphans: 0, staleWorktrees: 0 };

// Two at a time: each runs three Lisa processes, and a worker starved past its lease loses its claim.
describe.concurrent("scale-out faults", { concurrent: true }, () => {
  it.each(SCALE_OUT_FAULTS)(
    "Lisa scaled out recovers from $what ($name)",
    async (scenario) => {
      expect(await sufferScaleOutFault(scenario)).toEqual(HELD);
    },
    300_000,
  );
});
