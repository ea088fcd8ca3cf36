import { spawnSync } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/git-fixtures.ts";

// No Docker daemon here: what can be checked of the image without building it is checked, each
// step with the tool and version the image runs it with.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const dockerfile = read("Dockerfile");
const arg = (name: string) => new RegExp(`^ARG ${name}=(\\S+)$`, "m").exec(dockerfile)?.[1];

describe("the Dockerfile", () => {
  it("has npm ci --omit=dev accept the committed lockfile, with the npm version the image installs", () => {
    const npmVersion = arg("NPM_VERSION");
    expect(npmVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(dockerfile).toMatch(/npm install -g [^\n]*"npm@\$\{NPM_VERSION\}" \\\n\s+&& npm ci --omit=dev /);
    const copy = tempDir("docker-npm-ci");
    for (const file of ["package.json", "package-lock.json"]) copyFileSync(path.join(ROOT, file), path.join(copy, file));
    // npm ci checks the lockfile against package.json before it installs anything; a dry run stops there.
    // This machine's npm when it is that version (no registry needed); npx fetches it once otherwise.
    const local = spawnSync("npm", ["--version"], { encoding: "utf8" }).stdout.trim() === npmVersion;
    const npm = local ? (["npm", []] as const) : (["npx", ["--yes", `npm@${npmVersion}`]] as const);
    const ci = spawnSync(
      npm[0],
      [...npm[1], "ci", "--omit=dev", "--dry-run", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"],
      {
        cwd: copy,
        encoding: "utf8",
        timeout: 180_000,
      },
    );
    expect(ci.stderr).not.toMatch(/npm error/);
    expect(ci.status).toBe(0);
  });

  it("installs the agent CLIs at the versions the suite drives, from agents/, and puts them on PATH", () => {
    const agents = JSON.parse(read("agents/package.json")) as { dependencies: Record<string, string> };
    const lock = JSON.parse(read("agents/package-lock.json")) as { packages: Record<string, { version: string }> };
    for (const name of ["@anthropic-ai/claude-code", "@google/gemini-cli", "opencode-ai"]) {
      // Exact versions: a range would let the image and the suite drift apart.
      expect(agents.dependencies[name], name).toMatch(/^\d+\.\d+\.\d+$/);
      expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(agents.dependencies[name]);
    }
    expect(dockerfile).toContain("COPY agents/package.json agents/package-lock.json ./agents/");
    expect(dockerfile).toContain(`ENV PATH="/app/agents/node_modules/.bin:\${PATH}"`);
    const { scripts, devDependencies } = JSON.parse(read("package.json")) as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(scripts.postinstall).toBe("node scripts/install-agents.mjs");
    // Lisa's own lockfile holds none of them: their platform packages are what npm ci refused.
    expect(Object.keys(devDependencies)).not.toContain("opencode-ai");
  });
});
