import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { layerRules, ROOT, refuses } from "../support/layer-rules.ts";

const DOC = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");

/** The text under `heading`, up to the next `## ` heading. */
function section(heading: string): string {
  const start = DOC.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`docs/architecture.md has no section "${heading}"`);
  const rest = DOC.slice(start + heading.length + 2);
  const end = rest.search(/^## /m);
  return end === -1 ? rest : rest.slice(0, end);
}

/** The cells of each body row of the one table in `text` (its header and rule left out). */
const rows = (text: string): string[][] =>
  text
    .split("\n")
    .filter((line) => line.startsWith("| "))
    .slice(1)
    .filter((line) => !line.startsWith("| ---"))
    .map((line) => line.split(" | ").map((cell) => cell.replace(/^\| |\s*\|$/g, "")));

const ticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");

describe("docs/architecture.md's layer table", () => {
  const table = rows(section("## Layers")).map(([layer, folders]) => ({ layer, folders: ticked(folders ?? "") }));
  const rules = layerRules();

  it("names every folder once, and the folders biome.json gives layer rules to", () => {
    const named = table.flatMap((row) => row.folders);
    expect(named.length).toBeGreaterThan(10);
    expect(new Set(named).size).toBe(named.length);
    expect([...named].sort()).toEqual([...new Set(rules.flatMap((rule) => rule.folders))].sort());
  });

  it("has a row for each layer rule of biome.json, in the order the rules enforce", () => {
    for (const [index, row] of table.entries()) {
      const rule = rules.find((candidate) => [...candidate.folders].sort().join() === [...row.folders].sort().join());
      expect(rule, `no override of biome.json covers exactly the ${row.layer} row`).toBeDefined();
      const above = table.slice(0, index).flatMap((higher) => higher.folders);
      expect(
        above.filter((folder) => !refuses(rule?.refused ?? [], folder)),
        `${row.layer} may import these`,
      ).toEqual([]);
    }
    // Every other override (a row's second rule) covers folders of one row.
    for (const rule of rules)
      expect(
        table.some((row) => rule.folders.every((folder) => row.folders.includes(folder))),
        rule.folders.join(),
      ).toBe(true);
  });
});

describe('docs/architecture.md\'s "To change X" table', () => {
  const table = rows(section("## To change X, open these files"));

  it("has a row for each thing people change most", () => {
    const topics = table.map(([topic]) => topic ?? "").join("\n");
    for (const topic of ["transition", "PR body", "check run", "provider", "`/lisa` command", "migration", "Memory"])
      expect(topics).toContain(topic);
  });

  it("names files that exist", () => {
    const paths = table.flatMap(([, files]) => ticked(files ?? "")).filter((name) => /^(src|test|docs|prompts)\//.test(name));
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((file) => !existsSync(path.join(ROOT, file)))).toEqual([]);
  });
});

describe("docs/architecture.md", () => {
  it("names only src/ paths that exist", () => {
    const named = [...new Set(ticked(DOC).filter((name) => name.startsWith("src/")))];
    expect(named.filter((file) => !existsSync(path.join(ROOT, file)))).toEqual([]);
  });

  it("counts the files its label walk names", () => {
    const text = section("## One label event, file by file");
    const walk = text.slice(0, text.indexOf("The walk names"));
    const files = new Set(ticked(walk).flatMap((name) => (/^[\w./*-]+\.(ts|md)$/.test(name) ? [path.basename(name)] : [])));
    expect(text).toContain(`The walk names ${files.size} files from label to pull request.`);
  });
});
