import { describe, expect, it } from "vitest";
import { failureSignature, repeatedFailure, sameCause } from "../../src/runs/reflection.ts";

describe("failureSignature", () => {
  it("is the same for a failure that differs only in worktree, timings, hashes and spacing", () => {
    const a = failureSignature("npm test", "FAIL /w/run-1/test/a.test.ts (12 ms)\n  at abc1234def\n", "/w/run-1");
    const b = failureSignature("npm test", "FAIL  /w/run-2/test/a.test.ts (873 ms)\n  at 9f8e7d6c5b\n", "/w/run-2");
    expect(a).toBe(b);
  });

  it("differs for another test failing, or the same output of another gate", () => {
    const a = failureSignature("npm test", "FAIL test/a.test.ts", "/w");
    expect(failureSignature("npm test", "FAIL test/b.test.ts", "/w")).not.toBe(a);
    expect(failureSignature("npm run lint", "FAIL test/a.test.ts", "/w")).not.toBe(a);
  });
});

describe("repeatedFailure", () => {
  const failure = { gate: "npm test", signature: "s1" };
  const on = (cause: string, signature = "s1") => ({ gate: "npm test", signature, cause });

  it("waits for a second reflection, and for the same failure", () => {
    expect(repeatedFailure([on("x")], failure)).toBeUndefined();
    expect(repeatedFailure([on("the route is wrong", "s0"), on("the route is wrong")], failure)).toBeUndefined();
  });

  it("stops at two reflections with the same cause, at three whatever the causes", () => {
    expect(repeatedFailure([on("The route is wrong"), on("the route is wrong here")], failure)).toMatch(/same cause/);
    expect(repeatedFailure([on("cache"), on("locale")], failure)).toBeUndefined();
    expect(repeatedFailure([on("cache"), on("locale"), on("race")], failure)).toMatch(/after 3 reflections/);
  });

  it("counts two sessions that wrote no reflection as giving the same cause", () => {
    expect(sameCause("", "")).toBe(true);
    expect(sameCause("", "the route")).toBe(false);
  });
});
