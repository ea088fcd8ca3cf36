import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createRemote, gitIn } from "../support/git-fixtures.ts";
import type { AttackRun, HostFacts, World } from "./sandbox-cases.ts";

// The world a hostile agent attacks from inside a session: Lisa's files laid out as in production,
// and Lisa's stand-in (lisa-under-attack.ts) in a process of its own with real secrets in its
// environment. The sandbox group of the hostile-input suite and the unsandboxed control share it.

const LISA_UNDER_ATTACK = fileURLToPath(new URL("./lisa-under-attack.ts", import.meta.url));
const HOSTILE_AGENT = fileURLToPath(new URL("../fixtures/agents/hostile-agent.sh", import.meta.url));

/** Values only Lisa holds; none may reach the agent. */
export const SECRETS = {
  privateKey: `-----BEGIN RSA PRIVATE KEY-----app-key-${randomUUID()}`,
  webhook: `webhook-secret-${randomUUID()}`,
  db: `db-row-${randomUUID()}`,
  vault: `vault-secret-${randomUUID()}`,
  envFile: `env-file-secret-${randomUUID()}`,
  homeKey: `ssh-key-${randomUUID()}`,
  token: `ghs_${randomUUID().replaceAll("-", "")}`,
};

export const HOST: HostFacts = {
  root: process.getuid?.() === 0,
  ptraceAny:
    !existsSync("/proc/sys/kernel/yama/ptrace_scope") ||
    readFileSync("/proc/sys/kernel/yama/ptrace_scope", "utf8").trim() === "0",
};

const bases: string[] = [];

/**
 * Lisa's files for one step, laid out as in production. Under /var/tmp, not /tmp: the sandbox's
 * /tmp is a private, writable tmpfs, so a write to a Lisa path under /tmp would land there, unseen,
 * instead of failing as it does for a data directory like /data.
 */
export function createWorld(): World {
  const base = mkdtempSync("/var/tmp/lisa-security-");
  bases.push(base);
  const lisaCwd = path.join(base, "lisa");
  mkdirSync(lisaCwd);
  writeFileSync(path.join(lisaCwd, ".env"), `WEBHOOK_SECRET=${SECRETS.envFile}\n`);
  const lisaHome = path.join(base, "home");
  mkdirSync(path.join(lisaHome, ".ssh"), { recursive: true });
  writeFileSync(path.join(lisaHome, ".ssh", "id_ed25519"), `${SECRETS.homeKey}\n`);
  const dataDir = path.join(base, "data");
  mkdirSync(dataDir);
  writeFileSync(path.join(dataDir, "lisa.db"), `issue body of another repository: ${SECRETS.db}\n`);
  const mirror = createRemote(path.join(dataDir, "mirrors"), "acme/api", "main", { "README.md": "# API\n" });
  const vault = createRemote(path.join(dataDir, "mirrors"), "acme/vault", "main", { "secret.txt": `${SECRETS.vault}\n` });
  const worktree = path.join(dataDir, "worktrees", "run-1-step-1");
  gitIn(mirror, "worktree", "add", "--quiet", "-b", "lisa/1", worktree, "main");
  return {
    lisaCwd,
    lisaHome,
    dataDir,
    mirror,
    vault,
    worktree,
    mirrorConfig: readFileSync(path.join(mirror, "config"), "utf8"),
    dotGit: readFileSync(path.join(worktree, ".git"), "utf8"),
  };
}

/** Removes every world made so far. */
export function removeWorlds(): void {
  for (const base of bases.splice(0)) rmSync(base, { recursive: true, force: true });
}

/** Runs Lisa's stand-in, with real secrets in its environment, against the hostile agent. */
export async function attack(world: World, mode: "bwrap" | "off"): Promise<AttackRun> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--disable-warning=ExperimentalWarning",
      LISA_UNDER_ATTACK,
      JSON.stringify({ world, mode, agent: HOSTILE_AGENT, token: SECRETS.token, marker: randomUUID() }),
    ],
    {
      cwd: world.lisaCwd,
      env: {
        PATH: process.env.PATH,
        HOME: world.lisaHome,
        PRIVATE_KEY: SECRETS.privateKey,
        WEBHOOK_SECRET: SECRETS.webhook,
        ANTHROPIC_API_KEY: "sk-ant-api03-the-agents-own-key",
      },
      timeout: 90_000,
    },
  );
  return JSON.parse(stdout) as AttackRun;
}

/** Every file in `dir` but git's own data, read as text. */
export function filesIn(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => !name.split(path.sep).includes(".git"))
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile())
    .map((file) => readFileSync(file, "utf8"));
}
