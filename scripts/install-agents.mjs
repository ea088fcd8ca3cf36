#!/usr/bin/env node
// Lisa's postinstall: the agent CLIs the tests and the Docker image run, from agents/ with their own
// lockfile (see agents/package.json). Not when `npx lisa` links this checkout to run one command:
// npx runs a linked package's postinstall too, and each `npx lisa` would wait on npm first.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

if (process.env.npm_command === "exec") process.exit(0);
// `npm install`, not `ci`: the lockfile cannot list OpenCode's packages for other platforms where
// the registry lacks them, and `npm ci` refuses such a lockfile; `install` keeps to it all the same.
const agents = fileURLToPath(new URL("../agents", import.meta.url));
const npm = spawnSync("npm", ["install", "--prefix", agents, "--no-audit", "--no-fund"], { stdio: "inherit" });
process.exit(npm.status ?? 1);
