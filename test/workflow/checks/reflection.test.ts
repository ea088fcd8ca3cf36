import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../dev/temp-dir.ts";
import { sameCause } from "../../../src/markdown/same-cause.ts";
import { failureSignature, repeatedFailure, takeReflection } from "../../../src/workflow/checks/reflection.ts";

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
    expect(repeatedFailure([on(""), on("")], failure)).toMatch(/twice, and the agent wrote no reflection on it/);
  });
});

describe("takeReflection", () => {
  it("takes the reflection out of the manifest and leaves the rest as the agent wrote it", async () => {
    const dir = tempDir("reflection");
    const manifest = { title: "T", what: "W", reflection: { what_failed: "npm test", cause: "a typo", change: "fixed it" } };
    writeFileSync(path.join(dir, ".lisa-manifest.json"), JSON.stringify(manifest));
    expect(await takeReflection(dir)).toEqual(manifest.reflection);
    expect(JSON.parse(readFileSync(path.join(dir, ".lisa-manifest.json"), "utf8"))).toEqual({ title: "T", what: "W" });
    expect(await takeReflection(dir)).toBeUndefined();
  });

  it("follows no link the agent put in the manifest's place, and takes an oversized reflection as none", async () => {
    const dir = tempDir("reflection");
    const target = path.join(tempDir("elsewhere"), "secret.json");
    writeFileSync(target, JSON.stringify({ reflection: { what_failed: "x", cause: "y", change: "z" } }));
    symlinkSync(target, path.join(dir, ".lisa-manifest.json"));
    expect(await takeReflection(dir)).toBeUndefined();
    expect(readFileSync(target, "utf8")).toContain("reflection");

    const other = tempDir("reflection");
    writeFileSync(
      path.join(other, ".lisa-manifest.json"),
      JSON.stringify({ reflection: { what_failed: "x", cause: "y".repeat(301), change: "z" } }),
    );
    expect(await takeReflection(other)).toBeUndefined();
  });
});
