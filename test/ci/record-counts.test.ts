import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { columnParses, discardedCompareAndSets, githubWriters, rawStateMoves } from "../../dev/record-counts.ts";
import { ROOT } from "../support/layer-rules.ts";

// The counts of docs/architecture.md ("Counts"): each scan finds what it counts in a small source,
// and the repository's own src/ counts zero of both.

const file = (text: string) => [{ file: path.join("src", "workflow", "step", "x.ts"), text }];

describe("the scans behind the counts", () => {
  it("find a row column parsed outside the store, and leave the store and other JSON alone", () => {
    expect(columnParses(file('const g = JSON.parse(step.gates ?? "[]") as GateLine[];\n'))).toHaveLength(1);
    expect(columnParses(file("const c = parseConfig(JSON.parse(pass.config));\n"))).toHaveLength(1);
    expect(columnParses(file("const e = eventSchema.safeParse(JSON.parse(line));\n"))).toEqual([]);
    expect(columnParses([{ file: path.join("src", "store", "columns.ts"), text: "JSON.parse(row.gates);\n" }])).toEqual([]);
  });

  it("find a compare-and-set called as a statement, in a block or as an if's body, and not one whose result is used", () => {
    const dropped = [
      'async function a() {\n  await store.steps.move(id, "start");\n}\n',
      'async function b() {\n  if (ready) await deps.store.passes.transition(id, "built");\n}\n',
      "async function c() {\n  await changes.failRun(store, 1, 'm', []);\n}\n",
      "async function d() {\n  await store.atomically(async () => true, 1);\n}\n",
    ];
    for (const text of dropped) expect(discardedCompareAndSets(file(text)), text).toHaveLength(1);
    const used = [
      'async function a() {\n  if (!(await store.steps.move(id, "start"))) await refusedMove(ctx, "start");\n}\n',
      'async function b() {\n  const run = await store.runs.transition(id, "fail");\n  return run;\n}\n',
      "async function c() {\n  return changes.failRun(store, 1, 'm', []);\n}\n",
      "class D {\n  interruptRun(runId: number) {\n    return runId;\n  }\n}\n",
      '// await store.steps.move(id, "start");\n',
    ];
    for (const text of used) expect(discardedCompareAndSets(file(text)), text).toEqual([]);
  });

  it("find a run, pass or step moved by its table's event outside the store, and leave the store's changes and comments alone", () => {
    const moved = [
      'if (!(await store.steps.move(id, "start"))) await refusedMove(ctx, "start");\n',
      'const run = await deps.store.runs.transition(id, "merge", cause);\n',
      'if (!(await store.passes.transition(pass.id, "built"))) throw new Error("x");\n',
    ];
    for (const text of moved) expect(rawStateMoves(file(text)), text).toHaveLength(1);
    const named = [
      'if (!(await advancePass(store, pass.id, "built"))) await refusedMove(ctx, "built");\n',
      '// store.steps.move(id, "start") is the store\'s\n',
    ];
    for (const text of named) expect(rawStateMoves(file(text)), text).toEqual([]);
    const inStore = [{ file: path.join("src", "store", "step-changes.ts"), text: 'return store.steps.move(id, "start");\n' }];
    expect(rawStateMoves(inStore)).toEqual([]);
  });

  it("find a file that writes to GitHub by a port method or by taking the publisher, and leave reads, comments and src/github alone", () => {
    const at = (dir: string, text: string) => ({ file: path.join("src", dir, "x.ts"), text });
    const files = [
      at("workflow/step", "await ctx.gh.updatePullRequest(ref, 5, { body });\n"),
      at("commands", "const writer = publisherOf(gh);\n"),
      at("review", "const pr = await gh.getPullRequest(ref, 5);\n// gh.setLabels(ref, 5, []) is publication's\n"),
      at("github", "await octokit.setLabels(ref, 5, []);\n"),
    ];
    expect(githubWriters(files)).toEqual(["src/commands/x.ts", "src/workflow/step/x.ts"]);
  });
});

describe("src/", () => {
  it("parses no row column outside the store, drops no compare-and-set result, moves no state outside the store's changes, and writes to GitHub from src/publication alone (npm run counts)", () => {
    const run = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", "scripts/record-counts.ts"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.stdout).toContain("JSON.parse of a row column outside src/store: 0");
    expect(run.stdout).toContain("discarded compare-and-set results: 0");
    expect(run.stdout).toContain("state moves outside src/store: 0");
    const writers = /files that write to GitHub outside src\/github: (\d+), (\d+) of them outside src\/publication/.exec(
      run.stdout,
    );
    expect(Number(writers?.[1])).toBeLessThanOrEqual(8);
    expect(Number(writers?.[2])).toBe(0);
    expect(run.status, run.stderr).toBe(0);
  });
});
