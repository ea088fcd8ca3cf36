import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../dev/free-port.ts";
import { freshSchemaUrl, requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { tempDir } from "../support/git-fixtures.ts";

// `npx lisa <role>` as the README has a person run it: npm runs `sh -c lisa …`, and a signal npm
// receives reaches that shell, not Lisa. Every process the command started must be gone after it.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The pids of `pid`'s descendants, read from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name is in parentheses and may hold spaces; the parent pid is the second field after it.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone while we looked.
    }
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next = children.get(queue.shift() as number) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

const alive = (pid: number) => {
  try {
    // A zombie has exited; only its parent has yet to collect it.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
};

const started: ChildProcess[] = [];
/** Processes seen under npx: a Lisa orphaned by a failing test has left npx's tree by the time it is cleaned up. */
const seen = new Set<number>();
afterEach(() => {
  for (const child of started.splice(0)) {
    for (const pid of child.pid ? descendants(child.pid) : []) seen.add(pid);
    child.kill("SIGKILL");
  }
  for (const pid of seen) {
    try {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  seen.clear();
});

async function appEnv(): Promise<Record<string, string>> {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return {
    APP_ID: "1",
    PRIVATE_KEY: privateKey,
    WEBHOOK_SECRET: "0123456789abcdef0123456789abcdef",
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    LISA_DATA_DIR: path.join(tempDir("lisa-signals"), "data"),
  };
}

/** Starts `npx lisa <args>` from the checkout and waits until it answers on `port`. */
async function npxLisa(args: string[], env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn("npx", ["--yes", "lisa", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // A process group of its own, as a terminal gives a command it runs.
    detached: true,
  });
  started.push(child);
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  let exited: number | null | undefined;
  child.on("exit", (code) => {
    exited = code;
  });
  await waitFor(
    `npx lisa ${args.join(" ")} to answer on port ${port}`,
    async () => {
      if (exited !== undefined) throw new Error(`npx lisa ${args.join(" ")} exited (${exited}) before answering:\n${output}`);
      return (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined)) !== undefined;
    },
    60_000,
  );
  return child;
}

/** Ctrl-C in a terminal signals the whole foreground process group; a supervisor's stop, npm alone. */
function stop(npx: ChildProcess, signal: "SIGTERM" | "SIGINT") {
  if (signal === "SIGINT") process.kill(-(npx.pid as number), signal);
  else npx.kill(signal);
}

describe("a signal to npx lisa stops every process it started", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("lisa emulator, on %s", async (signal) => {
    const port = await freePort();
    const writeEnv = path.join(tempDir("lisa-signals"), "lisa-emulator.env");
    const npx = await npxLisa(["emulator", "--port", String(port), "--write-env", writeEnv], {}, port);
    const pids = descendants(npx.pid as number);
    for (const pid of pids) seen.add(pid);
    expect(pids.length).toBeGreaterThan(0);
    stop(npx, signal);
    await waitFor(`every process of npx lisa emulator to end after ${signal}`, () => !pids.some(alive), 15_000);
  });

  it.each<[string, boolean]>([
    ["all", false],
    ["web", true],
    ["worker", true],
  ])("lisa %s, on SIGTERM and on Ctrl-C", async (role, onPostgres) => {
    const extra: Record<string, string> = onPostgres
      ? { DATABASE_URL: freshSchemaUrl(await requirePostgres(), "test_signals") }
      : {};
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const env = { ...(await appEnv()), ...extra };
      const npx = await npxLisa([role], env, Number(env.PORT));
      const pids = descendants(npx.pid as number);
      for (const pid of pids) seen.add(pid);
      for (const pid of pids) seen.add(pid);
      stop(npx, signal);
      await waitFor(`every process of npx lisa ${role} to end after ${signal}`, () => !pids.some(alive), 15_000);
    }
  });
});
