import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationGroup } from "./hostile/authorization.ts";
import { boundsGroup } from "./hostile/bounds.ts";
import { gitMetadataGroup } from "./hostile/git-metadata.ts";
import type { Breach, HostileGroup } from "./hostile/hostile-input.ts";
import { liveTextGroup } from "./hostile/live-text.ts";
import { networkGroup } from "./hostile/network.ts";
import { publicationGroup } from "./hostile/publication.ts";
import { publishedTextGroup } from "./hostile/published-text.ts";
import { sandboxGroup } from "./hostile/sandbox.ts";
import { secretsGroup } from "./hostile/secrets.ts";
import { triggersGroup } from "./hostile/triggers.ts";

// Each group's inputs live in ./hostile/<group>.ts; add a group here and it is counted.
const GROUPS: HostileGroup[] = [
  sandboxGroup,
  networkGroup,
  authorizationGroup,
  secretsGroup,
  boundsGroup,
  liveTextGroup,
  triggersGroup,
  gitMetadataGroup,
  publicationGroup,
  publishedTextGroup,
];

const total: Breach & { inputs: number } = { inputs: 0, unauthorizedRuns: 0, secretsLeaked: 0, unbounded: 0 };

for (const group of GROUPS) {
  describe(`hostile input: ${group.name}`, () => {
    if (group.setup) beforeAll(group.setup, 180_000);
    if (group.teardown) afterAll(group.teardown, 120_000);
    it.each(group.inputs)("holds against $attempt ($name)", async (input) => {
      const breach = await input.run();
      total.inputs += 1;
      total.unauthorizedRuns += breach.unauthorizedRuns;
      total.secretsLeaked += breach.secretsLeaked;
      total.unbounded += breach.unbounded;
      expect(breach).toEqual({ unauthorizedRuns: 0, secretsLeaked: 0, unbounded: 0 });
    });
  });
}

describe("the hostile-input summary", () => {
  it("counts at least 110 inputs across the ten groups, all held", () => {
    const line = `${total.inputs} inputs, ${total.unauthorizedRuns} unauthorized runs, ${total.secretsLeaked} secrets leaked, ${total.unbounded} unbounded`;
    console.log(line);
    expect(new Set(GROUPS.map((g) => g.name)).size).toBe(10);
    expect(total.inputs).toBe(GROUPS.reduce((n, g) => n + g.inputs.length, 0));
    expect(total.inputs).toBeGreaterThanOrEqual(110);
    expect(line).toMatch(/^\d+ inputs, 0 unauthorized runs, 0 secrets leaked, 0 unbounded$/);
  });
});
