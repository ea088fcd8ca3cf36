import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SCRIPT = fileURLToPath(new URL("../../scripts/real-projects.ts", import.meta.url));

// `npm run real-projects` (its own suite, run by .ci/run) needs the npm registry; the offline suite
// checks only what it does without one.
describe("npm run real-projects without a registry", () => {
  it("says the registry is unreachable, names it, and exits 1 before starting anything", () => {
    const result = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", SCRIPT], {
      env: { ...process.env, npm_config_registry: "http://127.0.0.1:1/", npm_config_fetch_retries: "0" },
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(result.stderr).toMatch(
      /^real-projects: the npm registry \(http:\/\/127\.0\.0\.1:1\/\) is unreachable from this machine, and this suite installs real projects' dependencies from it: .*ECONNREFUSED/,
    );
    expect(result.stdout).toBe("");
    expect(result.status).toBe(1);
  });
});
