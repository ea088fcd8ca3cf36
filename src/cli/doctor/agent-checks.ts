import { installedVersion } from "../../providers/installed-version.ts";
import { type ProviderName, providers } from "../../providers/registry.ts";
import type { Check } from "./check.ts";

/** The variables that give each agent CLI its model credentials, any one of which will do. */
const CREDENTIALS: Record<ProviderName, string[]> = {
  claude: [
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
  ],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"],
  opencode: ["OPENCODE_CONFIG", "OPENCODE_CONFIG_CONTENT", "OPENCODE_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"],
};

/** One agent CLI: installed, given credentials, and (for Claude Code) run as a user it agrees to run as. */
export async function agentChecks(name: ProviderName, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const provider = providers[name];
  const binary = env[`LISA_${name.toUpperCase()}_PATH`] || provider.defaultBinary;
  const version = await installedVersion(binary).catch(() => undefined);
  const found = CREDENTIALS[name].filter((variable) => env[variable]);
  return [
    ...(name === "claude" && version ? [claudeUserCheck(env)] : []),
    version
      ? { name: `${name} CLI`, status: "ok", detail: `${binary} ${version}` }
      : {
          name: `${name} CLI`,
          status: "warn",
          detail: `${binary} not found or says no version`,
          fix: `Install it if a repository lists \`${name}\` under providers (docs/deployment.md, “Install the agent CLIs”), or set LISA_${name.toUpperCase()}_PATH.`,
        },
    found.length
      ? { name: `${name} credentials`, status: "ok", detail: found.join(", ") }
      : {
          name: `${name} credentials`,
          status: "warn",
          detail: "none in the environment",
          fix: `Set one of ${CREDENTIALS[name].join(", ")} in Lisa's environment if ${name} is used: Lisa sets it on the CLI's requests at its proxy.`,
        },
  ];
}

/** Claude Code refuses `--dangerously-skip-permissions`, which Lisa runs it with, as root unless told it is in a sandbox. */
function claudeUserCheck(env: NodeJS.ProcessEnv): Check {
  if (process.getuid?.() !== 0) return { name: "claude as this user", status: "ok", detail: "not root" };
  return env.IS_SANDBOX
    ? {
        name: "claude as this user",
        status: "warn",
        detail: "root, with IS_SANDBOX set: Claude Code will run",
        fix: "Keep IS_SANDBOX only inside a container or VM you trust; better, run Lisa as an ordinary user.",
      }
    : {
        name: "claude as this user",
        status: "FAIL",
        detail: "root: Claude Code refuses to run with --dangerously-skip-permissions, so every claude session would fail",
        fix: "Run Lisa as an ordinary user (the Docker image does), or, only inside a sandbox you trust, set IS_SANDBOX=1.",
      };
}
