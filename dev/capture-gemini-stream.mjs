#!/usr/bin/env node
// Captures what the real Gemini CLI (agents/node_modules) prints with `--output-format stream-json`
// against the scripted model server, for each case of test/fixtures/agents/gemini-stream-json.json,
// and writes its stdout, stderr and exit code back into that file. Run it after upgrading the CLI:
//   node dev/capture-gemini-stream.mjs
// Each case is { script, settings?, prompt? }: a scripted-model-server script, settings over the
// offline ones test/support/agent-clis.ts uses, and the prompt on standard input.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startScriptedModelServer } from "./scripted-model-server.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const fixture = path.join(root, "test/fixtures/agents/gemini-stream-json.json");
const gemini = path.join(root, "agents/node_modules/.bin/gemini");
const SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  ide: { enabled: false },
  tools: { useRipgrep: false },
};

async function capture({ script, settings = {}, prompt = "Write a.txt, then list the folder." }) {
  const server = await startScriptedModelServer({ quiet: true, script });
  const scratch = mkdtempSync(path.join(os.tmpdir(), "gemini-capture-"));
  const [home, cwd, tmp] = ["home", "work", "tmp"].map((name) => path.join(scratch, name));
  for (const dir of [path.join(home, ".gemini"), cwd, tmp]) mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(home, ".gemini", "settings.json"), JSON.stringify({ ...SETTINGS, ...settings }));
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmp,
    GEMINI_API_KEY: "scripted-gemini-api-key",
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_CLI_NO_RELAUNCH: "true",
  };
  const args = ["--approval-mode", "yolo", "--skip-trust", "--output-format", "stream-json", "--model", "gemini-2.5-flash"];
  const child = spawn(gemini, args, { cwd, env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  child.stdin.end(prompt);
  const exitCode = await new Promise((resolve) => child.on("close", (code) => resolve(code)));
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
  return { exitCode, stdout, stderr };
}

const cases = JSON.parse(readFileSync(fixture, "utf8"));
for (const [name, entry] of Object.entries(cases)) {
  Object.assign(entry, await capture(entry));
  process.stderr.write(`${name}: exit ${entry.exitCode}\n`);
}
writeFileSync(fixture, `${JSON.stringify(cases, null, 2)}\n`);
