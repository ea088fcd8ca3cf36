import { describe, expect, it } from "vitest";
import { validatePlan } from "../../src/planner/validate-plan.ts";

const repos = ["acme/api", "acme/web", "acme/docs"];
const step = (repo: string, order: number, scope = "do it") => ({ repo, scope, order });

describe("validatePlan", () => {
  it("accepts a valid plan and sorts its steps by order", () => {
    const check = validatePlan({ rationale: "API first", steps: [step("acme/web", 2), step("ACME/API", 1)] }, repos);
    expect(check).toEqual({
      ok: true,
      plan: { rationale: "API first", steps: [step("acme/api", 1), step("acme/web", 2)] },
    });
  });

  it.each([
    [
      "an unknown repository",
      { steps: [step("acme/unknown", 1)] },
      'steps[0].repo "acme/unknown" is not one of the configured repositories',
    ],
    ["a path", { steps: [step("../acme/api", 1)] }, 'steps[0].repo "../acme/api" is not one of the configured repositories'],
    ["a duplicate", { steps: [step("acme/api", 1), step("acme/api", 2)] }, 'steps[1].repo "acme/api" appears more than once'],
    ["a gap in the orders", { steps: [step("acme/api", 1), step("acme/web", 3)] }, "orders must be 1 to 2, each once; got 1, 3."],
    ["a repeated order", { steps: [step("acme/api", 1), step("acme/web", 1)] }, "orders must be 1 to 2, each once; got 1, 1."],
    ["an empty scope", { steps: [step("acme/api", 1, "  ")] }, "steps[0].scope"],
    ["a huge scope", { steps: [step("acme/api", 1, "x".repeat(2_001))] }, "steps[0].scope"],
    ["no steps", { steps: [] }, "steps"],
    ["an unknown key", { steps: [step("acme/api", 1)], extra: 1 }, 'Unrecognized key: "extra"'],
    ["no object at all", "plan", "expected object"],
  ])("rejects %s, saying what is wrong", (_what, raw, problem) => {
    const check = validatePlan(raw, repos);
    expect(check.ok).toBe(false);
    expect(check.ok ? [] : check.problems.join("\n")).toContain(problem);
  });

  it("lists every problem at once", () => {
    const check = validatePlan({ steps: [step("acme/nope", 1), step("acme/api", 1), step("acme/api", 5)] }, repos);
    expect(check.ok ? [] : check.problems).toHaveLength(3);
  });

  it("keeps a huge bad plan's answer short: at most 50 steps, at most 20 problems listed", () => {
    const many = Array.from({ length: 5_000 }, (_, i) => ({ repo: `acme/x${i}`, scope: "", order: 0 }));
    const check = validatePlan({ steps: many }, repos);
    const problems = check.ok ? [] : check.problems;
    expect(problems.length).toBeLessThanOrEqual(21);
    expect(problems.join("\n").length).toBeLessThan(10_000);
    const tooMany = validatePlan({ steps: many.slice(0, 30).map((s, i) => ({ ...s, scope: "x", order: i + 1 })) }, repos);
    expect(tooMany.ok ? [] : tooMany.problems).toHaveLength(21);
    expect(tooMany.ok ? "" : tooMany.problems.at(-1)).toBe("…and 10 more problems.");
  });
});
