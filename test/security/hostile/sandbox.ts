import { attack, createWorld, filesIn, removeWorlds, SECRETS } from "../attack-world.ts";
import { type AttackRun, outcomeOf, SANDBOX_CASES, type SandboxCase, type World } from "../sandbox-cases.ts";
import { type Breach, breachIf, HELD, type HostileGroup, type HostileInput } from "./hostile-input.ts";

// One session of the hostile agent in Lisa's real sandbox (bubblewrap), with Lisa's stand-in holding
// real secrets; each of its attempts is one input. The same agent without the sandbox, in
// sandbox.test.ts, shows that every attempt can succeed, so none of these passes by not trying.

let world: World;
let run: AttackRun;

/** What getting through would have cost: reading is a leak, writing or signalling is acting unallowed. */
function breachOf(sandboxCase: SandboxCase): Breach {
  const got = !outcomeOf(run, sandboxCase).startsWith("blocked") || sandboxCase.hostCheck?.(world) !== undefined;
  if (sandboxCase.name === "setsid-child-steals-git-token") {
    return { ...HELD, unbounded: run.survivors.length, secretsLeaked: run.stolen === null ? 0 : 1 };
  }
  const acts = /^(write-|redirect-|signal-|sysctl|forge-)/.test(sandboxCase.name);
  return breachIf(got, acts ? "unauthorizedRuns" : "secretsLeaked");
}

const fromCases: HostileInput[] = SANDBOX_CASES.map((sandboxCase) => ({
  name: sandboxCase.name,
  attempt: `an agent trying to ${sandboxCase.attempt}`,
  run: async () => breachOf(sandboxCase),
}));

export const sandboxGroup: HostileGroup = {
  name: "sandbox",
  async setup() {
    world = createWorld();
    run = await attack(world, "bwrap");
    // An agent that cannot work proves nothing about the sandbox: it must have done its job.
    if (!run.ok || !/^worktree-git\tleaked\twork$/m.test(run.report)) {
      throw new Error(`the hostile agent's session did not do its work in the sandbox:\n${run.report}`);
    }
  },
  async teardown() {
    removeWorlds();
  },
  inputs: [
    ...fromCases,
    {
      name: "secrets-in-worktree",
      attempt: "an agent writing whatever of Lisa's secrets it found into its worktree, for Lisa to commit",
      run: async () => {
        const written = filesIn(world.worktree).join("\n");
        return { ...HELD, secretsLeaked: Object.values(SECRETS).filter((secret) => written.includes(secret)).length };
      },
    },
  ],
};
