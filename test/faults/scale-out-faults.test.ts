import { describe, expect, it } from "vitest";
import { countFault, type FaultTotals, faultSummary, HELD } from "./fault-world.ts";
import { SCALE_OUT_FAULTS } from "./scale-out-catalog.ts";
import { sufferScaleOutFault } from "./scale-out-world.ts";

// Each fault of ./scale-out-catalog.ts against `lisa web` and two `lisa worker`s on PostgreSQL
// (./scale-out-world.ts), counted as the single-process faults are.

const total: FaultTotals = { faults: 0, killPoints: 0, ...HELD };

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
      const counts = await inTurn(() => sufferScaleOutFault(scenario));
      countFault(total, scenario, counts);
      expect(counts).toEqual(HELD);
    },
    // The time waiting for a turn counts too.
    900_000,
  );
});

describe("the scale-out fault summary", () => {
  it("counts every scale-out fault, all recovered from", () => {
    const line = faultSummary(total, "scale-out faults");
    console.log(line);
    expect(total.faults).toBe(SCALE_OUT_FAULTS.length);
    expect(new Set(SCALE_OUT_FAULTS.map((fault) => fault.name)).size).toBe(SCALE_OUT_FAULTS.length);
    expect(line).toMatch(
      /^\d+ scale-out faults \(\d+ SIGKILL points\), 0 lost runs, 0 duplicate PRs, 0 duplicate comments, 0 orphans, 0 stale worktrees, 0 GitHub behind the store$/,
    );
  });
});
