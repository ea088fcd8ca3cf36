import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { GitHubEmulator } from "../emulator/github-emulator.ts";
import type { SandboxSettings } from "../src/sandbox/sandbox-settings.ts";
import { tempDir } from "./temp-dir.ts";
import { waitFor } from "./wait-for.ts";

const LISA = fileURLToPath(new URL("./emulated-lisa-process.ts", import.meta.url));

/** Starts Lisa in a process of its own on `dataDir`, and points the emulator's webhooks at it. */
export async function startLisaChild(
  emulator: GitHubEmulator,
  options: {
    dataDir: string;
    claudeBinary: string;
    secret: string;
    shutdownGraceMs?: number;
    githubRetries?: boolean;
    /** Scale-out: a shared store and this process's part (emulated-lisa-process.ts). */
    databaseUrl?: string;
    role?: "web" | "worker" | "all";
    workerName?: string;
    leaseSeconds?: number;
    concurrency?: number;
    /** Whether the emulator's webhooks go to this Lisa (a worker of a web process receives none). */
    receivesWebhooks?: boolean;
    /** Where the child's log goes (at info level), to tell afterwards what each process did. */
    logFile?: string;
    /** Environment variables given to the child besides the test's own (a fault's PATH). */
    env?: Record<string, string>;
    /** A command the child is started under (a mount namespace where the data directory is a small disk). */
    launcher?: string[];
    sandbox?: SandboxSettings;
    /** Where the child writes its event-loop delay (emulated-lisa-process.ts). */
    loopDelayFile?: string;
  },
): Promise<ChildProcess & { port: number }> {
  const portFile = path.join(tempDir("lisa-port"), "port");
  const [command, ...args] = [
    ...(options.launcher ?? []),
    process.execPath,
    "--disable-warning=ExperimentalWarning",
    LISA,
    JSON.stringify({ emulatorUrl: emulator.url, gitBaseUrl: emulator.gitBaseUrl, portFile, ...options }),
  ];
  const child = spawn(
    command as string,
    args,
    options.logFile
      ? {
          stdio: ["ignore", openSync(options.logFile, "a"), openSync(options.logFile, "a")],
          env: { ...process.env, ...options.env, LISA_TEST_LOG: "info" },
        }
      : { stdio: "ignore", env: { ...process.env, ...options.env } },
  );
  const port = await waitFor("Lisa to listen", () => {
    const written = existsSync(portFile) ? Number(readFileSync(portFile, "utf8")) : 0;
    return written > 0 && written;
  });
  if (options.receivesWebhooks ?? true) emulator.setWebhookUrl(`http://127.0.0.1:${port}/api/github/webhooks`);
  // Where its webhooks, `/healthz` and `/metrics` are served.
  return Object.assign(child, { port });
}
