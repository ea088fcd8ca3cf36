import { closeSync, openSync, realpathSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { GitError } from "../errors.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { runWithDeadline } from "../process/run-with-deadline.ts";

/** Deadline of a git command that talks to the remote; a stalled transfer fails sooner, at LOW_SPEED. */
export const GIT_NETWORK_TIMEOUT_MS = 15 * 60_000;

/** Deadline of a local git command, which holds the repository's lock while it runs. */
export const GIT_LOCAL_TIMEOUT_MS = 5 * 60_000;

/** A transfer slower than this many bytes per second for this many seconds is abandoned by git itself. */
const LOW_SPEED = { limit: 1_000, seconds: 60 };

/** Settings given on every command line; they win over every config file git reads. */
const SAFE_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.useReplaceRefs=false",
  "core.attributesFile=/dev/null",
  // Indexes the agent could forge in `objects/`: they would tell git other parents, trees or objects to send.
  "core.commitGraph=false",
  "core.multiPackIndex=false",
  "pack.useBitmaps=false",
  "protocol.ext.allow=never",
];

const NETWORK_COMMANDS = new Set(["fetch", "push", "pull", "clone", "ls-remote"]);

/**
 * Environment for every git command Lisa runs: no prompts, no system or user config or attributes,
 * and no replace objects (the agent can write `refs/replace/*`: with them, what Lisa reads of a
 * commit would not be what a push sends).
 */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "LANG", "TMPDIR", "SSL_CERT_FILE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_REPLACE_OBJECTS: "1",
  };
}

/**
 * Runs `use` with an open file descriptor of a git config that sends the installation token as an
 * HTTP header. The file is deleted as soon as it is open: the token is in no path, environment,
 * argument or config file, only behind the descriptor git and its helpers inherit as fd 3.
 */
async function withTokenConfig<T>(token: string, use: (fd: number) => Promise<T>): Promise<T> {
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
  const dir = await mkdtemp(path.join(tmpdir(), "lisa-git-auth-"));
  let fd: number | undefined;
  try {
    const file = path.join(dir, "config");
    await writeFile(file, `[http]\n\textraHeader = Authorization: Basic ${basic}\n`, { mode: 0o600 });
    fd = openSync(file, "r");
    await rm(dir, { recursive: true, force: true });
    return await use(fd);
  } finally {
    if (fd !== undefined) closeSync(fd);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs `git <args>` in `cwd` under a deadline that kills git and its helpers (a network command
 * also gives up on a transfer that stalls). Hooks and the other programs git can be told to run are
 * disabled because the agent can write into the shared repository, and they would run with Lisa's
 * environment.
 * @throws GitError with the command and git's message, secrets redacted
 */
export async function git(
  cwd: string,
  args: string[],
  options: { token?: string; timeoutMs?: number; input?: string; encoding?: "latin1"; indexFile?: string } = {},
): Promise<string> {
  const command = args[0] ?? "";
  const timeoutMs = options.timeoutMs ?? (NETWORK_COMMANDS.has(command) ? GIT_NETWORK_TIMEOUT_MS : GIT_LOCAL_TIMEOUT_MS);
  const gitArgs = [
    // Nothing an agent can name runs or redirects what Lisa reads: no hooks, no file-system monitor,
    // no attributes file of the user's, no replace objects.
    ...SAFE_CONFIG.flatMap((setting) => ["-c", setting]),
    "-c",
    `http.lowSpeedLimit=${LOW_SPEED.limit}`,
    "-c",
    `http.lowSpeedTime=${LOW_SPEED.seconds}`,
    ...args,
  ];
  const run = (fds: number[], env: Record<string, string>) =>
    runWithDeadline("git", gitArgs, { cwd, env, timeoutMs, fds, input: options.input, encoding: options.encoding });
  const result = options.token
    ? await withTokenConfig(options.token, (fd) => run([fd], { ...baseEnv(), GIT_CONFIG_GLOBAL: "/dev/fd/3" }))
    : await run([], { ...baseEnv(), ...(options.indexFile ? { GIT_INDEX_FILE: options.indexFile } : {}) });
  // Without the final newline, as callers compare and split the output.
  if (result.ending === "exited" && result.exitCode === 0) return result.stdout.replace(/\n$/, "");
  const secrets = options.token ? [options.token] : [];
  const message =
    result.ending === "timeout"
      ? `it did not finish within ${Math.round(timeoutMs / 1000)}s and was stopped`
      : redactSecrets(
          result.stderr || result.stdout || (result.spawnError?.message ?? `exit ${result.exitCode}`),
          secrets,
        ).trim();
  throw new GitError(`git ${command} failed in ${cwd}: ${message}`, { cause: result });
}

/**
 * Checks that the worktree at `dir` keeps its git data in `mirror`. Lisa runs git in worktrees an
 * agent has written; one whose `.git` points elsewhere would have Lisa read a config (and run the
 * programs it names) that the agent chose.
 * @throws GitError naming both repositories
 */
export async function assertWorktreeOf(mirror: string, dir: string): Promise<void> {
  const common = (await git(dir, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).trim();
  if (realpathSync(common) !== realpathSync(mirror)) {
    throw new GitError(`The worktree ${dir} does not belong to ${mirror} (its git data is in ${common}); Lisa will not use it.`);
  }
}
