#!/usr/bin/env node
// Runs before `npm start`, `npm run demo`, `npm test` and `npm run check`, on whatever Node.js the
// machine has: plain JavaScript, so an old Node reads it and says what to install instead of failing
// later with "Unknown file extension .ts" or a demo that opens no pull request.
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";

/** Lisa runs its TypeScript directly: type stripping is on by default from Node.js 22.18. */
export const MIN_NODE = [22, 18];

/** What this machine lacks for Lisa, each with how to get it; empty when nothing. */
export function missingPrerequisites({
  nodeVersion = process.versions.node,
  hasBwrap = bwrapAnswers(),
  platform = process.platform,
} = {}) {
  const missing = [];
  const [major, minor] = nodeVersion.split(".").map(Number);
  if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
    missing.push(
      `Node.js ${MIN_NODE.join(".")} or newer (this is ${nodeVersion}): install the current LTS from nodejs.org, or run \`nvm install\` here (.nvmrc)`,
    );
  }
  if (platform !== "linux") {
    missing.push(
      `Linux (this is ${platform}): agents run in a bubblewrap sandbox, which needs Linux namespaces; use a Linux machine, VM or the Docker image`,
    );
  } else if (!hasBwrap) {
    missing.push(
      "bubblewrap (`bwrap`), the agents' sandbox: `sudo apt-get install bubblewrap` (Debian, Ubuntu) or `sudo dnf install bubblewrap` (Fedora)",
    );
  }
  return missing;
}

function bwrapAnswers() {
  return spawnSync("bwrap", ["--version"], { stdio: "ignore" }).status === 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const missing = missingPrerequisites();
  if (missing.length > 0) {
    process.stderr.write(`Lisa needs, and this machine lacks:\n${missing.map((m) => `  - ${m}\n`).join("")}`);
    process.exit(1);
  }
}
