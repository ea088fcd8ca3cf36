#!/usr/bin/env node
// Runs before `npm start`, `npm run demo`, `npm test` and `npm run check`, on whatever Node.js the
// machine has: plain JavaScript, so an old Node reads it and says what to install instead of failing
// later with "Unknown file extension .ts" or a demo that opens no pull request.
// `--sandbox-optional` (start, demo): LISA_SANDBOX=off, the way out Lisa's own error names, is
// honoured; the test suite always needs the real sandbox.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

/** Lisa runs its TypeScript directly (type stripping, on by default from Node.js 22.18); nock, which the tests use, needs 22.20. */
export const MIN_NODE = [22, 20];

/** What this machine lacks for Lisa, each with how to get it; empty when nothing. */
export function missingPrerequisites({
  nodeVersion = process.versions.node,
  sandbox = bwrapSandbox(),
  platform = process.platform,
  sandboxOff = false,
} = {}) {
  const missing = [];
  const [major, minor] = nodeVersion.split(".").map(Number);
  if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
    missing.push(
      `Node.js ${MIN_NODE.join(".")} or newer (this is ${nodeVersion}): install the current LTS from nodejs.org, or run \`nvm install\` here (.nvmrc)`,
    );
  }
  if (sandboxOff) return missing;
  if (platform !== "linux") {
    missing.push(
      `Linux (this is ${platform}): agents run in a bubblewrap sandbox, which needs Linux namespaces; use a Linux machine, VM or the Docker image`,
    );
  } else if (sandbox === "missing") {
    missing.push(
      "bubblewrap (`bwrap`), the agents' sandbox: `sudo apt-get install bubblewrap` (Debian, Ubuntu) or `sudo dnf install bubblewrap` (Fedora)",
    );
  } else if (sandbox !== "works") {
    missing.push(
      `a bubblewrap that can make namespaces: \`bwrap\` is installed but refused (${sandbox}); allow unprivileged user namespaces (docs/troubleshooting.md), or in a container run it with the options docs/deployment.md gives`,
    );
  }
  return missing;
}

/** "works" when bwrap runs a process in new user, PID and network namespaces, as Lisa's sandbox does; "missing", or what it said. */
export function bwrapSandbox() {
  const probe = spawnSync(
    "bwrap",
    [
      ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"],
      ...["--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "true"],
    ],
    { encoding: "utf8" },
  );
  if (probe.error) return "missing";
  if (probe.status === 0) return "works";
  return (probe.stderr || `exit ${probe.status}`).trim().split("\n")[0];
}

/** LISA_SANDBOX as `npm start` will see it: `.env` in this folder wins over the environment, as Lisa reads it. */
export function sandboxSetting(env = process.env, dotEnv = existsSync(".env") ? readFileSync(".env", "utf8") : "") {
  const line = /^\s*(?:export\s+)?LISA_SANDBOX\s*=\s*["']?([^"'\s#]*)/m.exec(dotEnv);
  return line ? line[1] : env.LISA_SANDBOX;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const sandboxOff = process.argv.includes("--sandbox-optional") && sandboxSetting() === "off";
  const missing = missingPrerequisites({ sandboxOff, ...(sandboxOff ? { sandbox: "works" } : {}) });
  if (missing.length > 0) {
    const wayOut = process.argv.includes("--sandbox-optional")
      ? "Or run agents unsandboxed with LISA_SANDBOX=off (only for issues and repositories you trust).\n"
      : "";
    process.stderr.write(`Lisa needs, and this machine lacks:\n${missing.map((m) => `  - ${m}\n`).join("")}${wayOut}`);
    process.exit(1);
  }
}
