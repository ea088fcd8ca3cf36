/** What any CLI needs to run: a shell's basics, locale and proxies. Nothing secret. */
const BASE_ENV = [
  "PATH",
  "HOME",
  "USER",
  "SHELL",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TZ",
  "TMPDIR",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
] as const;

/** Names that must never reach an agent even if an allowlist names them by mistake. */
const FORBIDDEN =
  /^(GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_PAT|PRIVATE_KEY|PRIVATE_KEY_PATH|WEBHOOK_SECRET|APP_ID|GIT_CONFIG_.*|GIT_ASKPASS|LISA_.*)$/;

/**
 * Builds an agent's environment from an allowlist: the basics, the provider's own variables,
 * and Lisa's additions (git identity). Any value equal to a known secret is dropped.
 */
export function buildAgentEnv(
  source: NodeJS.ProcessEnv,
  providerEnv: readonly string[],
  extra: Record<string, string>,
  secrets: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...providerEnv]) {
    const value = source[name];
    if (value !== undefined && !FORBIDDEN.test(name)) env[name] = value;
  }
  Object.assign(env, extra);
  for (const [name, value] of Object.entries(env)) {
    if (secrets.some((secret) => secret.length >= 8 && value.includes(secret))) delete env[name];
  }
  return env;
}
