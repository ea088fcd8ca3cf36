/**
 * One hostile input to Lisa, tried through its public interfaces (signed webhooks, the agent's
 * worktree, plans, manifests, configs, comments). Each attempt returns what it got through; the
 * suite adds them up into its summary line and fails on anything but zeros.
 */
export interface HostileInput {
  /** Short and unique within its group, e.g. "fifo-plan". */
  name: string;
  /** What the attacker tries, in words. */
  attempt: string;
  /**
   * Tries it and reports what got through. It may also `expect` what Lisa should do instead (a
   * clear answer where a human can see it); a failed expectation fails the input.
   */
  run: () => Promise<Breach>;
}

/** What one input got through. Every count is 0 when Lisa held. */
export interface Breach {
  /** Runs, sessions, pushes or comments the attacker caused but was not allowed to. */
  unauthorizedRuns: number;
  /** Secret values that reached something Lisa published, pushed, logged or handed to the agent. */
  secretsLeaked: number;
  /** Resources (time, memory, size, count) the input made unbounded: a hang, a comment over GitHub's limit. */
  unbounded: number;
}

/** One of the groups of issues 8 and 20: what runs before and after its inputs, and the inputs. */
export interface HostileGroup {
  name:
    | "sandbox"
    | "network"
    | "authorization"
    | "secrets"
    | "bounds"
    | "live text"
    | "triggers"
    | "git metadata"
    | "publication"
    | "published text";
  setup?: () => Promise<void>;
  teardown?: () => Promise<void>;
  inputs: HostileInput[];
}

export const HELD: Breach = { unauthorizedRuns: 0, secretsLeaked: 0, unbounded: 0 };

/** A breach of one kind when `condition` holds, for inputs that test one thing. */
export function breachIf(condition: boolean, kind: keyof Breach): Breach {
  return { ...HELD, [kind]: condition ? 1 : 0 };
}
