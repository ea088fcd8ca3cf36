import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { freePort } from "../../dev/free-port.ts";
import { tempDir } from "../../dev/temp-dir.ts";
import { median, REPS, verdict } from "./stats.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BARE_PROBOT = "import { run } from 'probot'; await run(() => {});";

/** Resident memory of a process in MiB, from the kernel's own count. */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB$/m);
  if (!line?.[1]) throw new Error(`bench: no VmRSS for ${pid}`);
  return Number(line[1]) / 1024;
}

/**
 * Starts `npm start`'s entry (or a bare Probot app) as its own process, waits until its server
 * answers and then 3 s of idleness, and reads its resident memory.
 */
async function idleRss(kind: "lisa" | "probot"): Promise<number> {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const port = await freePort();
  const args =
    kind === "lisa"
      ? ["--disable-warning=ExperimentalWarning", path.join(ROOT, "src/main.ts")]
      : ["--input-type=module", "-e", BARE_PROBOT];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      APP_ID: "1",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: "bench-idle-memory-secret-of-at-least-32-bytes",
      PORT: String(port),
      LOG_LEVEL: "fatal",
      LISA_DATA_DIR: path.join(tempDir("bench-idle"), "data"),
    },
    stdio: "ignore",
  });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`bench: ${kind} did not start`);
      const answered = await fetch(`http://127.0.0.1:${port}/`).then(
        () => true,
        () => false,
      );
      if (answered) break;
      await sleep(100);
    }
    await sleep(3000);
    return rssMiB(child.pid ?? 0);
  } finally {
    child.kill("SIGKILL");
  }
}

/** Idle resident memory of Lisa (`npm start` with an empty store) against a bare Probot app, interleaved. */
export async function idleMemory(): Promise<void> {
  const lisa: number[] = [];
  const probot: number[] = [];
  for (let rep = 0; rep < REPS; rep++) {
    lisa.push(await idleRss("lisa"));
    probot.push(await idleRss("probot"));
  }
  const mine = median(lisa);
  console.log(
    `Idle RSS, median of ${REPS} starts: Lisa ${mine.toFixed(1)} MiB, bare Probot ${median(probot).toFixed(1)} MiB, ${(mine / median(probot)).toFixed(2)}× (goal ≤ 150 MB: ${verdict(mine * 1.048576 <= 150)})`,
  );
}
