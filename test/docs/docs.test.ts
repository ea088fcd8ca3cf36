import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { z } from "zod";
import { DOCKER_SECURITY_OPTIONS } from "../../scripts/image/run-options.ts";
import { configSchema } from "../../src/config/config-schema.ts";
import { envSchema } from "../../src/config/env-schema.ts";
import { parseConfigYaml } from "../../src/config/parse-config.ts";
import { providers } from "../../src/providers/registry.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const REFERENCE = "docs/configuration.md";
const DOCS = ["README.md", ...readdirSync(path.join(ROOT, "docs")).map((file) => `docs/${file}`)];

/** Every key a zod schema takes, as a dotted path (`limits.max_iterations`; `[]` for an array's entries). */
function keyPaths(schema: z.ZodType, prefix = ""): string[] {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  const inner = (key: string) => keyPaths(def[key] as z.ZodType, prefix);
  switch (def.type) {
    case "object":
      return Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([key, value]) => {
        const at = prefix ? `${prefix}.${key}` : key;
        return [at, ...keyPaths(value, at)];
      });
    case "optional":
    case "default":
    case "prefault":
    case "nullable":
      return inner("innerType");
    case "pipe":
      return [...new Set([...inner("in"), ...inner("out")])];
    case "array":
      return keyPaths(def.element as z.ZodType, `${prefix}[]`);
    default:
      return [];
  }
}

/** The names in backticks in the first cell of each row of the tables under `heading` in `file`. */
function documented(file: string, heading: string): Set<string> {
  const text = read(file);
  const start = text.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`${file} has no section "${heading}"`);
  const level = heading.split(" ")[0] ?? "##";
  const end = text.slice(start + heading.length + 2).search(new RegExp(`^${level} `, "m"));
  const section = end === -1 ? text.slice(start) : text.slice(start, start + heading.length + 2 + end);
  const names = section
    .split("\n")
    .filter((line) => line.startsWith("| ") && !/^\| -/.test(line))
    .flatMap((line) => [...(line.split("|")[1] ?? "").matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? ""));
  return new Set(names);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

function anchorsOf(file: string): Set<string> {
  const text = read(file).replace(/```[\s\S]*?```/g, "");
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1] ?? ""));
  const explicit = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1] ?? "");
  return new Set([...headings, ...explicit]);
}

describe("README.md", () => {
  const readme = read("README.md");

  it("is one screen a newcomer reads: at most 150 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(150);
  });

  it("gives the two commands, and a first real pull request in at most 15 lines", () => {
    expect(readme).toContain("npm install && npm run demo");
    expect(readme).toContain("npm run check");
    const first = /\n## Your first real pull request\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? "";
    expect(first.trim()).not.toBe("");
    expect(first.trim().split("\n").length).toBeLessThanOrEqual(15);
  });
});

describe("every link of the README and of docs/", () => {
  it.each(DOCS)("resolves in %s: each file linked exists, and each anchor is a heading there", (file) => {
    const text = read(file).replace(/```[\s\S]*?```/g, "");
    const broken: string[] = [];
    for (const [, target = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto: — not this repository's to check offline
      const [where = "", anchor] = target.split("#");
      const linked = where ? path.normalize(path.join(path.dirname(file), where)) : file;
      if (!existsSync(path.join(ROOT, linked))) broken.push(`${target}: no ${linked}`);
      else if (anchor && linked.endsWith(".md") && !anchorsOf(linked).has(anchor))
        broken.push(`${target}: no #${anchor} in ${linked}`);
    }
    expect(broken).toEqual([]);
  });
});

describe(`the configuration reference (${REFERENCE})`, () => {
  it("documents every key of .github/lisa.yml (src/config/config-schema.ts), and no other", () => {
    const keys = keyPaths(configSchema);
    const rows = documented(REFERENCE, "### Every key");
    const missing = keys.filter((key) => !rows.has(key));
    expect(
      missing.map((key) => `\`${key}\` (src/config/config-schema.ts): add a row for it to "### Every key" in ${REFERENCE}`),
    ).toEqual([]);
    expect(
      [...rows].filter((row) => !keys.includes(row)).map((row) => `${REFERENCE} documents \`${row}\`, no key of the schema`),
    ).toEqual([]);
  });

  it("documents every environment variable Lisa reads (src/config/env-schema.ts, and each agent's path)", () => {
    const variables = [
      ...Object.keys(envSchema.shape),
      ...Object.keys(providers).map((name) => `LISA_${name.toUpperCase()}_PATH`),
    ];
    const rows = documented(REFERENCE, "## Environment variables");
    expect(
      variables
        .filter((name) => !rows.has(name))
        .map((name) => `\`${name}\` (src/config/env-schema.ts): add a row for it to "## Environment variables" in ${REFERENCE}`),
    ).toEqual([]);
  });
});

describe("docs/setup-and-cache.md", () => {
  it("gives set-up examples (npm, pnpm, pip/uv, Go) that are valid configurations", () => {
    const examples = [...read("docs/setup-and-cache.md").matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
    expect(examples.map((example) => parseConfigYaml(example).setup[0]?.split(" ")[0])).toEqual([
      "npm",
      "corepack",
      "python3",
      'GOMODCACHE="$PWD/.gomodcache"',
    ]);
  });
});

describe("the docker run options the docs give", () => {
  it("are the ones npm run image runs the image with, and docker/compose.yml's", () => {
    const run = /docker run ((?:--security-opt \S+ )+)/.exec(read("docs/deployment.md"))?.[1] ?? "";
    expect(
      run
        .trim()
        .split(/\s+/)
        .filter((word) => word !== "--security-opt"),
    ).toEqual(DOCKER_SECURITY_OPTIONS);
    const compose = parse(read("docker/compose.yml"), { merge: true }) as {
      services: Record<string, { security_opt?: string[] }>;
    };
    for (const service of ["web", "worker"]) expect(compose.services[service]?.security_opt).toEqual(DOCKER_SECURITY_OPTIONS);
  });
});
