import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { GitHubEmulator } from "../emulator/github-emulator.ts";
import type { SandboxSettings } from "../src/sandbox/sandbox-settings.ts";
import { tempDir } from "./temp-dir.ts";
import { waitFor } from "./wait-for.ts";

const LISA = fileURLToPath(new URL("./emulated-lisa-process.ts", import.meta.url));

/** The path a Lisa started by startLisaChild answers once it has nothing pending, queued or running (Lisa.idle). */
export const IDLE_PATH = "/_test/idle";

/** Resolves once the Lisa listening on `port` (startLisaChild's) has nothing pending, queued or running; throws after `timeoutMs`. */
export async function lisaChildIdle(port: number, timeoutMs = 60_000): Promise<void> {
  const answer = await fetch(`http://127.0.0.1:${port}${IDLE_PATH}`, { signal: AbortSignal.timeout(timeoutMs) }).catch(
    (error: unknown) => {
      throw new Error(`Lisa on port ${port} was not idle within ${timeoutMs} ms`, { cause: error });
    },
  );
  if (answer.status !== 204) throw new Error(`Lisa answered ${IDLE_PATH} with ${answer.status}`);
}

/** Starts Lisa in a process of its own on `dataDir`, and points the emulator's webhooks at it. */
export async function startLisaChild(
  emulator: GitHubEmulator,
  options: {
    dataDir: string;
    claudeBinary: string;
    secret: string;
    shutdownGraceMs?: number;
    githubRetries?: boolean;
    /** Octokit and the write pacing as `npm start` has them (emulated-lisa-process.ts). */
    deployed?: boolean;
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
    /** How long it may take to listen; 30 s by default. */
    listenTimeoutMs?: number;
  },
): Promise<ChildProcess & { port: number }> {
  const { listenTimeoutMs = 30_000, ...childOptions } = options;
  const portDir = tempDir("lisa-port");
  const portFile = path.join(portDir, "port");
  const [command, ...args] = [
    ...(options.launcher ?? []),
    process.execPath,
    "--disable-warning=ExperimentalWarning",
    LISA,
    JSON.stringify({ emulatorUrl: emulator.url, gitBaseUrl: emulator.gitBaseUrl, portFile, ...childOptions }),
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
  let port: number;
  try {
    port = await waitFor(
      "Lisa to listen",
      () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`Lisa exited (${child.exitCode ?? child.signalCode}) before it listened`);
        const written = existsSync(portFile) ? Number(readFileSync(portFile, "utf8")) : 0;
        return written > 0 && written;
      },
      listenTimeoutMs,
    );
  } catch (error) {
    // A Lisa that never listened is no test's to kill: it must not outlive the failure (a loaded
    // faults run once left 36 of them running).
    child.kill("SIGKILL");
    throw error;
  } finally {
    rmSync(portDir, { recursive: true, force: true });
  }
  if (options.receivesWebhooks ?? true) emulator.setWebhookUrl(`http://127.0.0.1:${port}/api/github/webhooks`);
  // Where its webhooks, `/healthz` and `/metrics` are served.
  return Object.assign(child, { port });
}
