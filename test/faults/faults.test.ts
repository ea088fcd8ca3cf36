import { describe, expect, it } from "vitest";
import { FAULTS } from "./catalog.ts";
import { countFault, type FaultTotals, faultSummary, HELD, sufferFault } from "./fault-world.ts";

// `npm run faults` runs this file alone; `npm test` runs it with the rest. Each fault is one
// scenario of ./catalog.ts against Lisa in processes of its own (./fault-world.ts).

const total: FaultTotals = { faults: 0, killPoints: 0, ...HELD };

describe.concurrent("faults", () => {
  it.each(FAULTS)(
    "Lisa recovers from $what ($name)",
    async (scenario) => {
      const counts = await sufferFault(scenario);
      countFault(total, scenario, counts);
      expect(counts).toEqual(HELD);
    },
    240_000,
  );
});

describe("the fault summary", () => {
  it("counts at least 60 faults and 20 kill points, all recovered from", () => {
    const line = faultSummary(total, "faults");
    console.log(line);
    expect(total.faults).toBe(FAULTS.length);
    expect(new Set(FAULTS.map((fault) => fault.name)).size).toBe(FAULTS.length);
    expect(total.faults).toBeGreaterThanOrEqual(60);
    expect(total.killPoints).toBeGreaterThanOrEqual(20);
    expect(line).toMatch(
      /^\d+ faults \(\d+ SIGKILL points\), 0 lost runs, 0 duplicate PRs, 0 duplicate comments, 0 orphans, 0 stale worktrees, 0 GitHub behind the store$/,
    );
  });
});
