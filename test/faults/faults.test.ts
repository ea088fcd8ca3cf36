import { describe, expect, it } from "vitest";
import { FAULTS } from "./catalog.ts";
import type { FaultCounts } from "./fault-world.ts";
import { sufferFault } from "./fault-world.ts";

// `npm run faults` runs this file alone; `npm test` runs it with the rest. Each fault is one
// scenario of ./catalog.ts against Lisa in processes of its own (./fault-world.ts).

const HELD: FaultCounts = {
  lostRuns: 0,
  duplicatePrs: 0,
  duplicateComments: 0,
  orphans: 0,
  staleWorktrees: 0,
  githubBehind: 0,
};
const total: FaultCounts & { faults: number; killPoints: number } = { faults: 0, killPoints: 0, ...HELD };

describe.concurrent("faults", () => {
  it.each(FAULTS)(
    "Lisa recovers from $what ($name)",
    async (scenario) => {
      const counts = await sufferFault(scenario);
      total.faults += 1;
      if (scenario.killPoint) total.killPoints += 1;
      for (const key of Object.keys(HELD) as (keyof FaultCounts)[]) total[key] += counts[key];
      expect(counts).toEqual(HELD);
    },
    240_000,
  );
});

describe("the fault summary", () => {
  it("counts at least 20 kill points and every fault, all recovered from", () => {
    const line = `${total.faults} faults (${total.killPoints} SIGKILL points), ${total.lostRuns} lost runs, ${total.duplicatePrs} duplicate PRs, ${total.duplicateComments} duplicate comments, ${total.orphans} orphans, ${total.staleWorktrees} stale worktrees, ${total.githubBehind} GitHub behind the store`;
    console.log(line);
    expect(total.faults).toBe(FAULTS.length);
    expect(new Set(FAULTS.map((fault) => fault.name)).size).toBe(FAULTS.length);
    expect(total.killPoints).toBeGreaterThanOrEqual(20);
    expect(line).toMatch(
      /^\d+ faults \(\d+ SIGKILL points\), 0 lost runs, 0 duplicate PRs, 0 duplicate comments, 0 orphans, 0 stale worktrees, 0 GitHub behind the store$/,
    );
  });
});
