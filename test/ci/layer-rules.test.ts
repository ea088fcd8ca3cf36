import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../../dev/temp-dir.ts";
import { layerRules, ROOT } from "../support/layer-rules.ts";

// The layer rules and the cycle rule of biome.json, run by the real Biome on small src/ trees: each
// fixture fails with its offending import and passes without it, so the rule is what fails it.

const BIOME = path.join(ROOT, "node_modules", ".bin", "biome");
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Biome's lint of `files` (paths under the fixture) with the repository's biome.json. */
function lint(files: Record<string, string>): { status: number | null; output: string } {
  const dir = tempDir("layers");
  made.push(dir);
  copyFileSync(path.join(ROOT, "biome.json"), path.join(dir, "biome.json"));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const run = spawnSync(BIOME, ["lint", "--config-path", path.join(dir, "biome.json"), "src"], { cwd: dir, encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe("biome.json's layer rules", () => {
  const scheduler = { "src/scheduler/claim.ts": "export const claim = (): number => 1;\n" };

  it("fail a file of the workflow that imports src/scheduler, and pass it without that import", () => {
    const upward = lint({
      ...scheduler,
      "src/workflow/step/build.ts":
        'import { claim } from "../../scheduler/claim.ts";\n\nexport const build = (): number => claim();\n',
    });
    expect(upward.status, upward.output).not.toBe(0);
    expect(upward.output).toMatch(/src\/workflow\/step\/build\.ts:1:\d+ lint\/style\/noRestrictedImports/);

    // The same tree with the import turned round: the scheduler may import the workflow.
    const downward = lint({
      "src/workflow/step/build.ts": "export const build = (): number => 1;\n",
      "src/scheduler/claim.ts":
        'import { build } from "../workflow/step/build.ts";\n\nexport const claim = (): number => build();\n',
    });
    expect(downward.status, downward.output).toBe(0);
  });

  it("fail a phase of the workflow that imports one above it (pass > step > checks > session > context), and pass the import the other way", () => {
    const phases = ["pass", "step", "checks", "session", "context"];
    for (const [index, lower] of phases.entries()) {
      if (index === 0) continue;
      const upper = phases[index - 1] ?? "";
      const at = (phase: string) => `src/workflow/${phase}/${phase}-part.ts`;
      const exported = (phase: string) => `export const ${phase}Part = (): number => 1;\n`;
      const importing = (from: string, to: string) =>
        `import { ${to}Part } from "../${to}/${to}-part.ts";\n\nexport const ${from}Part = (): number => ${to}Part();\n`;
      const upward = lint({ [at(upper)]: exported(upper), [at(lower)]: importing(lower, upper) });
      expect(upward.status, upward.output).not.toBe(0);
      expect(upward.output).toContain(`${at(lower)}:1:`);
      const downward = lint({ [at(lower)]: exported(lower), [at(upper)]: importing(upper, lower) });
      expect(downward.status, downward.output).toBe(0);
    }
    // The planner shares the context's rule: it never imports a phase.
    const planner = lint({
      "src/workflow/session/session-part.ts": "export const sessionPart = (): number => 1;\n",
      "src/planner/plan.ts":
        'import { sessionPart } from "../workflow/session/session-part.ts";\n\nexport const plan = (): number => sessionPart();\n',
    });
    expect(planner.status, planner.output).not.toBe(0);
    expect(planner.output).toContain("src/planner/plan.ts:1:");
  });

  it("fail a file of the workflow or rendering that imports the GitHub publisher, and pass the same import in src/publication", () => {
    const publisher = {
      "src/github/github-publisher.ts": "export const publisherOf = (gh: object): object => gh;\n",
    };
    const importing =
      'import { publisherOf } from "../github/github-publisher.ts";\n\nexport const write = (gh: object): object => publisherOf(gh);\n';
    for (const file of [
      "src/workflow/step/deliver.ts",
      "src/commands/react.ts",
      "src/reporting/render.ts",
      "src/review/gate.ts",
    ]) {
      const depth = file.split("/").length - 2;
      const writer = lint({ ...publisher, [file]: importing.replace('"../github/', `"${"../".repeat(depth)}github/`) });
      expect(writer.status, writer.output).not.toBe(0);
      expect(writer.output).toContain(`${file}:1:`);
      expect(writer.output).toMatch(/only src\/publication writes to GitHub/i);
    }
    const publication = lint({ ...publisher, "src/publication/pull-requests.ts": importing });
    expect(publication.status, publication.output).toBe(0);
  });

  it("fail a cycle made of type-only imports, and pass the same files importing one way", () => {
    const a = (imports: boolean) =>
      `${imports ? 'import type { B } from "./b.ts";\n\n' : ""}export interface A {\n  name: string;\n${imports ? "  b?: B;\n" : ""}}\n`;
    const b = 'import type { A } from "./a.ts";\n\nexport interface B {\n  a: A;\n}\n';
    const cycle = lint({ "src/store/a.ts": a(true), "src/store/b.ts": b });
    expect(cycle.status, cycle.output).not.toBe(0);
    expect(cycle.output).toMatch(/src\/store\/a\.ts:1:\d+ lint\/suspicious\/noImportCycles/);

    const oneWay = lint({ "src/store/a.ts": a(false), "src/store/b.ts": b });
    expect(oneWay.status, oneWay.output).toBe(0);
  });
});

describe("every part of src/", () => {
  const covered = new Set(layerRules().flatMap((rule) => rule.folders));
  const parts = readdirSync(path.join(ROOT, "src"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || entry.name.endsWith(".ts"))
    .map((entry) => `src/${entry.name}`);

  it("is a folder or top-level file some layer rule of biome.json covers, or a folder whose every part one covers", () => {
    const coveredWhole = (part: string): boolean =>
      covered.has(part) ||
      (!part.endsWith(".ts") &&
        readdirSync(path.join(ROOT, part)).length > 0 &&
        readdirSync(path.join(ROOT, part)).every((entry) => coveredWhole(`${part}/${entry}`)));
    expect(parts.filter((part) => !coveredWhole(part))).toEqual([]);
  });

  it("and every layer rule covers a part that exists", () => {
    expect([...covered].filter((folder) => !existsSync(path.join(ROOT, folder)))).toEqual([]);
  });
});
