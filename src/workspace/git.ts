import { execa } from "execa";
import { GitError } from "../errors.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";

/**
 * Environment that lets one git command authenticate with the installation token. The header lives
 * only in this process's environment: never in a remote URL, a config file or a log line.
 */
export function tokenEnv(token: string): Record<string, string> {
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}

/** Environment for every git command Lisa runs: no prompts, no user or system config. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "LANG", "TMPDIR", "SSL_CERT_FILE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
}

/**
 * Runs `git <args>` in `cwd`. Hooks are disabled because the agent can write them into the shared
 * repository, and a hook would run with Lisa's environment.
 * @throws GitError with the command and git's message, secrets redacted
 */
export async function git(cwd: string, args: string[], options: { token?: string } = {}): Promise<string> {
  const env = { ...baseEnv(), ...(options.token ? tokenEnv(options.token) : {}) };
  const secrets = options.token ? [options.token] : [];
  const result = await execa("git", ["-c", "core.hooksPath=/dev/null", ...args], {
    cwd,
    env,
    extendEnv: false,
    reject: false,
    stdin: "ignore",
  });
  if (result.exitCode !== 0 || result.failed) {
    const message = redactSecrets(String(result.stderr || result.stdout || result.shortMessage), secrets).trim();
    throw new GitError(`git ${args[0]} failed in ${cwd}: ${message}`, { cause: result });
  }
  return String(result.stdout);
}
