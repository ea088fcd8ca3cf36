import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { GitHubEmulator } from "../../src/emulator/github-emulator.ts";
import { tempDir } from "./git-fixtures.ts";
import { waitFor } from "./wait-for.ts";

const LISA = fileURLToPath(new URL("./emulated-lisa-process.ts", import.meta.url));

/**
 * Starts Lisa in a process of its own (emulated-lisa-process.ts) on `dataDir`, so a test can kill
 * or stop it mid-run and start another on the same data, and points the emulator's webhooks at it.
 */
export async function startLisaChild(
  emulator: GitHubEmulator,
  options: { dataDir: string; claudeBinary: string; secret: string; shutdownGraceMs?: number },
): Promise<ChildProcess> {
  const portFile = path.join(tempDir("lisa-port"), "port");
  const child = spawn(
    process.execPath,
    [
      "--disable-warning=ExperimentalWarning",
      LISA,
      JSON.stringify({ emulatorUrl: emulator.url, gitBaseUrl: emulator.gitBaseUrl, portFile, ...options }),
    ],
    { stdio: "ignore" },
  );
  const port = await waitFor("Lisa to listen", () => existsSync(portFile) && readFileSync(portFile, "utf8"));
  emulator.setWebhookUrl(`http://127.0.0.1:${port}/api/github/webhooks`);
  return child;
}
