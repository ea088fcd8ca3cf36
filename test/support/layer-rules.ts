import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** One `noRestrictedImports` override of biome.json over part of `src/`: the folders it covers and those it refuses. */
export interface LayerRule {
  /** `src/workflow/step`, `src/app.ts`: folders and top-level files, as the docs name them. */
  folders: string[];
  refused: string[];
}

interface Override {
  includes?: string[];
  linter?: { rules?: { style?: { noRestrictedImports?: { options?: { patterns?: { group: string[] }[] } } } } };
}

// The patterns every src/ override repeats (the app never imports test or development code), not layers.
const OUTSIDE_SRC = new Set(["test", "dev", "scripts", "emulator"]);

// src/workflow/step/** → src/workflow/step; src/app.ts stays as it is.
const folderOf = (include: string) => include.replace(/\/\*\*$/, "");

// A refused folder or top-level file as a pattern names it; an exception (`!…`) refuses nothing.
function refusedFolder(pattern: string): string | undefined {
  const match = /^\*\*\/([\w./-]+?)(\/\*\*)?$/.exec(pattern);
  if (!match?.[1] || OUTSIDE_SRC.has(match[1])) return undefined;
  return `src/${match[1]}`;
}

/** The layer rules of a biome.json: its overrides over named parts of `src/` that have `noRestrictedImports`. */
export function layerRules(biome: { overrides?: Override[] } = readBiome()): LayerRule[] {
  return (biome.overrides ?? []).flatMap((override) => {
    const includes = override.includes ?? [];
    const rule = override.linter?.rules?.style?.noRestrictedImports;
    if (!rule || includes.length === 0 || !includes.every((i) => i.startsWith("src/") && i !== "src/**")) return [];
    const groups = (rule.options?.patterns ?? []).flatMap((pattern) => pattern.group);
    return [{ folders: includes.map(folderOf), refused: groups.flatMap((g) => refusedFolder(g) ?? []) }];
  });
}

/** Whether `refused` (folders a rule refuses) covers `folder`, itself or as a folder inside one. */
export const refuses = (refused: string[], folder: string): boolean =>
  refused.some((refusedFolder) => folder === refusedFolder || folder.startsWith(`${refusedFolder}/`));

export const readBiome = () => JSON.parse(readFileSync(path.join(ROOT, "biome.json"), "utf8"));
