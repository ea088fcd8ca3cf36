import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  attackNetwork,
  createNetworkWorld,
  NETWORK_CASES,
  type NetworkRun,
  type NetworkWorld,
  networkOutcome,
} from "./network-world.ts";

// The hostile network agent's attempts inside the sandbox are inputs of the hostile-input suite
// (hostile/network.ts). Here the same agent runs in the same sandbox with the host's network (the
// network defence off): every attempt this host can answer must succeed, so that none of those
// inputs holds merely because the agent could not have got through anyway.

let world: NetworkWorld;
let shared: NetworkRun;

beforeAll(async () => {
  world = await createNetworkWorld();
  shared = await attackNetwork(world, "shared");
}, 120_000);

afterAll(() => world.close());

describe("the same agent with the host's network (the control: every probe can succeed)", () => {
  it("reaches its model API directly", () => {
    expect(networkOutcome(shared, "model-api")).toMatch(/^leaked: direct: HTTP\/1\.1 200/);
  });

  it.each(NETWORK_CASES.map((c) => ({ ...c })))("can $attempt ($name)", (networkCase) => {
    if (!networkCase.available(world)) {
      // Nothing on this host answers it (no metadata service, no PostgreSQL): the attempt fails here too.
      expect(networkOutcome(shared, networkCase.name)).toMatch(/^blocked/);
      return;
    }
    // Directly: there is no proxy here.
    expect(networkOutcome(shared, networkCase.name)).toMatch(/^leaked: (?!via proxy)/);
    if (networkCase.counted) expect(shared.reached[networkCase.name]).toBeGreaterThan(0);
  });
});
