import { describe, expect, it } from "vitest";
import { pendingGateFailure } from "../../../src/workflow/checks/pending-gate-failure.ts";

const gates = [
  { command: "npm run lint", passed: true },
  { command: "npm test", passed: false, output: "FAIL test/a.test.ts" },
];
const session = (iteration: number, purpose: "implement" | "fix_gates" | "fix_ci") => ({ iteration, purpose });

describe("pendingGateFailure", () => {
  it("is the failing gate a fix session of this try left unanswered, with its output", () => {
    const step = { gates, iteration_base: 2 };
    expect(pendingGateFailure(step, [session(3, "implement"), session(4, "fix_gates")], [])).toEqual({
      command: "npm test",
      passed: false,
      output: "FAIL test/a.test.ts",
      durationMs: 0,
    });
  });

  it("is none once the session answered, after another purpose, or in an earlier try", () => {
    const step = { gates, iteration_base: 0 };
    expect(pendingGateFailure(step, [session(1, "implement"), session(2, "fix_gates")], [{ iteration: 2 }])).toBeUndefined();
    expect(pendingGateFailure(step, [session(1, "fix_gates"), session(2, "fix_ci")], [])).toBeUndefined();
    expect(pendingGateFailure({ gates, iteration_base: 2 }, [session(2, "fix_gates")], [])).toBeUndefined();
  });

  it("never takes a check of the pull request's CI, or a line without output, for the gate failure", () => {
    const ci = [{ command: "test", ci: true, passed: false, output: "CI report" }];
    const bare = [{ command: "npm test", passed: false }];
    expect(pendingGateFailure({ gates: ci, iteration_base: 0 }, [session(1, "fix_gates")], [])).toBeUndefined();
    expect(pendingGateFailure({ gates: bare, iteration_base: 0 }, [session(1, "fix_gates")], [])).toBeUndefined();
    expect(pendingGateFailure({ gates: null, iteration_base: 0 }, [session(1, "fix_gates")], [])).toBeUndefined();
  });
});
