import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

  it("builds on the official Node.js LTS image by default, or on the base a build names (BASE_IMAGE)", () => {
    expect(arg("BASE_IMAGE")).toMatch(/^node:lts-/);
    expect(dockerfile).toMatch(/^FROM \$\{BASE_IMAGE\}$/m);
  });

  it("has every file npm's install scripts run in the image when its npm ci runs them", () => {
    // The files the Dockerfile copies before the RUN of `npm ci`, laid out as in its WORKDIR.
    const steps = dockerfile.slice(0, dockerfile.search(/^RUN .*(\n\s+.*)*npm ci /m));
    const app = tempDir("docker-context");
    for (const [, sources = "", destination = ""] of steps.matchAll(/^COPY (.+) (\S+)$/gm)) {
      for (const source of sources.split(" ")) {
        const target = destination.endsWith("/")
          ? path.join(app, destination, path.basename(source))
          : path.join(app, destination);
        mkdirSync(path.dirname(target), { recursive: true });
        copyFileSync(path.join(ROOT, source), target);
      }
    }
    // npm ci runs the root package's own install scripts; an `npm` of our own stands in for the
    // installs they start (install-agents.mjs's), which need the registry.
    const bin = tempDir("docker-npm");
    writeFileSync(path.join(bin, "npm"), `#!/bin/sh\necho "$@" >>"${bin}/calls"\n`);
    chmodSync(path.join(bin, "npm"), 0o755);
    const { scripts } = JSON.parse(readFileSync(path.join(app, "package.json"), "utf8")) as { scripts: Record<string, string> };
    for (const name of ["preinstall", "install", "postinstall", "prepare"]) {
      const script = scripts[name];
      if (!script) continue;
      const ran = spawnSync("sh", ["-c", script], {
        cwd: app,
        env: { ...process.env, PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`, npm_command: "ci" },
        encoding: "utf8",
      });
      expect(ran.stderr, `${name}: ${script}`).toBe("");
      expect(ran.status, `${name}: ${script}`).toBe(0);
    }
    // The postinstall installed the agent CLIs from agents/, as the image's PATH expects.
    expect(readFileSync(path.join(bin, "calls"), "utf8")).toBe(
      `install --prefix ${path.join(app, "agents")} --no-audit --no-fund\n`,
    );
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
