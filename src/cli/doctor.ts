import { createPrivateKey } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";
import pg from "pg";
import { ProbotOctokit } from "probot";
import { parse as parseYaml } from "yaml";
import { unquotedPrivateKey } from "../config/app-key.ts";
import { EnvError, settingsFromEnv } from "../config/env-schema.ts";
import { asGitHubError } from "../github/github-error.ts";
import { installedVersion } from "../providers/installed-version.ts";
import { type ProviderName, providers } from "../providers/registry.ts";
import { checkSandbox } from "../sandbox/check-sandbox.ts";
import { apiBaseUrl, quietLog } from "./github-api.ts";

type Status = "ok" | "warn" | "FAIL";

interface Check {
  name: string;
  status: Status;
  detail: string;
  /** What to do about it, for a warning or a failure. */
  fix?: string;
}

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

/**
 * `lisa doctor`: checks what a deployment needs before the first issue is labeled (Node.js, git,
 * the sandbox, the data directory, the environment, the App's credentials and webhook secret, each
 * agent CLI and its credentials) and prints a table with a fix for each problem. `--live` also asks
 * GitHub, as the App, for itself and its installations. Exit status 0 when nothing failed
 * (warnings allowed), 1 otherwise.
 */
export async function doctor(args: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const checks: Check[] = [];
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  checks.push(
    major > 22 || (major === 22 && minor >= 18)
      ? { name: "Node.js", status: "ok", detail: process.version }
      : { name: "Node.js", status: "FAIL", detail: process.version, fix: "Install Node.js 22.18 or newer." },
  );
  const git = await execa("git", ["--version"], { reject: false });
  checks.push(
    git.exitCode === 0
      ? { name: "git", status: "ok", detail: String(git.stdout).trim() }
      : { name: "git", status: "FAIL", detail: "not found", fix: "Install git." },
  );

  let settings: ReturnType<typeof settingsFromEnv> | undefined;
  try {
    settings = settingsFromEnv(env);
    checks.push({ name: "environment", status: "ok", detail: "every LISA_* and GHE_* variable is valid" });
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    checks.push({
      name: "environment",
      status: "FAIL",
      detail: error.message.replaceAll("\n", "; "),
      fix: "Fix those variables.",
    });
  }
  if (settings) {
    const problem = settings.sandbox.mode === "off" ? undefined : await checkSandbox(settings.sandbox);
    checks.push(
      settings.sandbox.mode === "off"
        ? {
            name: "sandbox",
            status: "warn",
            detail: "LISA_SANDBOX=off: agents run unconfined",
            fix: "Unset LISA_SANDBOX unless agents, issues and repositories are all trusted.",
          }
        : problem
          ? {
              name: "sandbox",
              status: "FAIL",
              detail: problem.split(". ")[0] ?? problem,
              fix: "See docs/security-model.md, “What a deployment needs”.",
            }
          : { name: "sandbox", status: "ok", detail: "bubblewrap runs a process in its own namespaces" },
    );
    checks.push(await dataDirCheck(settings.dataDir));
    if (settings.databaseUrl) checks.push(await databaseCheck(settings.databaseUrl));
  }
  const app = await appChecks(env);
  checks.push(...app);
  if (args.includes("--live")) {
    checks.push(
      ...(app.some((check) => check.status === "FAIL")
        ? [
            {
              name: "App on GitHub",
              status: "FAIL" as const,
              detail: "not asked: the App's settings above are incomplete",
              fix: "Fix them first.",
            },
          ]
        : await liveAppChecks(env)),
    );
  }
  for (const name of Object.keys(providers) as ProviderName[]) checks.push(...(await agentChecks(name, env)));

  printTable(checks);
  return checks.some((check) => check.status === "FAIL") ? 1 : 0;
}

/** The PostgreSQL store DATABASE_URL names answers a query, within a few seconds. */
async function databaseCheck(url: string): Promise<Check> {
  // The URL may hold a password: only its host, port and database are shown.
  const parsed = URL.parse(url);
  if (!parsed)
    return {
      name: "database",
      status: "FAIL",
      detail: "DATABASE_URL is not a URL",
      fix: "Write it as postgres://user@host:5432/database.",
    };
  const where = `${parsed.host}${parsed.port ? "" : ":5432"}${parsed.pathname}`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>("SHOW server_version");
    return { name: "database", status: "ok", detail: `PostgreSQL ${rows[0]?.server_version ?? "?"} at ${where}` };
  } catch (error) {
    return {
      name: "database",
      status: "FAIL",
      detail: `PostgreSQL at ${where} did not answer: ${(error as Error).message}`,
      fix: "Start PostgreSQL there or correct DATABASE_URL; without DATABASE_URL, `lisa all` keeps its store in SQLite.",
    };
  } finally {
    await client.end().catch(() => {});
  }
}

async function dataDirCheck(dir: string): Promise<Check> {
  const probe = path.join(dir, `.lisa-doctor-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, "");
    await rm(probe);
    return { name: "data directory", status: "ok", detail: `${dir} is writable` };
  } catch (error) {
    return {
      name: "data directory",
      status: "FAIL",
      detail: `${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      fix: "Set LISA_DATA_DIR to a folder Lisa's user can write (the Docker image uses the /data volume).",
    };
  }
}

/** The App's private key as Probot reads it: PRIVATE_KEY (`\\n` for newlines allowed), else the file at PRIVATE_KEY_PATH. */
async function appKey(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const key = unquotedPrivateKey(env.PRIVATE_KEY)?.replace(/\\n/g, "\n");
  if (key) return key;
  return env.PRIVATE_KEY_PATH ? await readFile(env.PRIVATE_KEY_PATH, "utf8").catch(() => undefined) : undefined;
}

async function appChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = [];
  const register = "Register the App (`npm start`, then open http://localhost:3000) or copy its settings into .env.";
  checks.push(
    env.APP_ID && /^\d+$/.test(env.APP_ID)
      ? { name: "APP_ID", status: "ok", detail: env.APP_ID }
      : { name: "APP_ID", status: "FAIL", detail: env.APP_ID ? `not a number: ${env.APP_ID}` : "not set", fix: register },
  );
  const key = await appKey(env);
  if (!key) {
    checks.push({
      name: "private key",
      status: "FAIL",
      detail: "neither PRIVATE_KEY nor a readable PRIVATE_KEY_PATH",
      fix: register,
    });
  } else {
    try {
      const parsed = createPrivateKey(key);
      checks.push({
        name: "private key",
        status: "ok",
        detail: `${parsed.asymmetricKeyType?.toUpperCase()} key, ${parsed.asymmetricKeyDetails?.modulusLength ?? "?"} bits`,
      });
    } catch (error) {
      checks.push({
        name: "private key",
        status: "FAIL",
        detail: `not a PEM private key (${(error as Error).message})`,
        fix: "Download a new key from the App's settings page.",
      });
    }
  }
  const secret = env.WEBHOOK_SECRET ?? "";
  checks.push(
    secret.length >= 16 && secret !== "development"
      ? { name: "webhook secret", status: "ok", detail: `${secret.length} characters` }
      : {
          name: "webhook secret",
          status: "FAIL",
          detail: secret ? "too short or the development placeholder" : "not set",
          fix: "Set WEBHOOK_SECRET to the App's webhook secret: at least 16 random characters, the same on GitHub.",
        },
  );
  return checks;
}

/** The permissions and events app.yml asks for, which the registered App must hold for every feature to work. */
async function manifestGrants(): Promise<Required<Grants>> {
  const manifest = parseYaml(await readFile(new URL("../../app.yml", import.meta.url), "utf8")) as {
    default_permissions?: Record<string, string>;
    default_events?: string[];
  };
  return { permissions: manifest.default_permissions ?? {}, events: manifest.default_events ?? [] };
}

/**
 * `--live`: signs a JWT with the App's key and asks GitHub (or GHE_HOST) for the App and its
 * installations: wrong pairs of APP_ID and key, an App installed nowhere, and an App registered
 * before app.yml asked for a permission all show here rather than on the first issue.
 */
async function liveAppChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const key = (await appKey(env)) ?? "";
  const baseUrl = apiBaseUrl(env);
  const octokit = new ProbotOctokit({
    auth: { appId: Number(env.APP_ID), privateKey: key },
    baseUrl,
    log: quietLog,
    retry: { enabled: false },
    throttle: { enabled: false },
    request: { timeout: 15_000 },
  });
  let app: (Grants & { slug?: string }) | null;
  let installed: (Grants & { id: number; account?: { login?: string } | null; repository_selection?: string })[];
  try {
    app = (await octokit.rest.apps.getAuthenticated()).data;
    installed = (await octokit.rest.apps.listInstallations({ per_page: 100 })).data;
  } catch (error) {
    const status = asGitHubError(error)?.status;
    return [
      {
        name: "App on GitHub",
        status: "FAIL",
        detail: `${baseUrl} answered ${status || (error as Error).message}`,
        fix:
          status === 401
            ? "APP_ID and the private key are not one App's: download a new key from the App's settings page."
            : "Check the network, and GHE_HOST / GHE_PROTOCOL on GitHub Enterprise Server.",
      },
    ];
  }
  const checks: Check[] = [
    installed.length > 0
      ? { name: "App on GitHub", status: "ok", detail: `${app?.slug ?? "?"}, ${installed.length} installation(s)` }
      : {
          name: "App on GitHub",
          status: "warn",
          detail: `${app?.slug ?? "?"} is installed nowhere`,
          fix: "Install it on the repositories Lisa should work in (the App's page, “Install App”).",
        },
  ];
  const wanted = await manifestGrants();
  const appMissing = missingGrants(wanted, app ?? {});
  checks.push(
    appMissing.permissions.length === 0
      ? { name: "App permissions", status: "ok", detail: "every one app.yml asks for" }
      : {
          name: "App permissions",
          status: "FAIL",
          detail: `missing ${appMissing.permissions.join(", ")}`,
          fix: "Add them in the App's settings (Permissions & events); each installation's owner must then accept them.",
        },
    appMissing.events.length === 0
      ? { name: "App events", status: "ok", detail: "subscribed to every one app.yml lists" }
      : {
          name: "App events",
          status: "FAIL",
          detail: `not subscribed to ${appMissing.events.join(", ")}: GitHub never sends them, and what they carry is never seen`,
          fix: "Tick them under “Subscribe to events” in the App's settings (Permissions & events).",
        },
  );
  for (const installation of installed) {
    const { permissions, events } = missingGrants(wanted, installation);
    const name = `installation ${installation.account?.login ?? `#${installation.id}`}`;
    const gaps = [...permissions, ...events.map((event) => `${event} events`)];
    // An installation holds only what its owner accepted; a grant the App lacks is reported above.
    const unaccepted = gaps.filter(
      (gap) => !appMissing.permissions.includes(gap) && !appMissing.events.includes(gap.replace(/ events$/, "")),
    );
    checks.push(
      unaccepted.length === 0
        ? { name, status: "ok", detail: "has accepted every permission and event" }
        : {
            name,
            status: "FAIL",
            detail: `has not accepted ${unaccepted.join(", ")}`,
            fix: "Its owner must accept the App's new permissions: Settings → GitHub Apps (Integrations) → Lisa → Review request.",
          },
    );
  }
  for (const installation of installed) {
    if (installation.repository_selection === "selected") checks.push(await orgConfigCheck(octokit, baseUrl, installation));
  }
  return checks;
}

/**
 * An installation on selected repositories reads an organization-wide config (`<owner>/.github`,
 * which `_extends` and the fallback for a repository without its own name) only if `.github` is
 * among them: otherwise those repositories run on the defaults, silently.
 */
async function orgConfigCheck(
  octokit: InstanceType<typeof ProbotOctokit>,
  baseUrl: string,
  installation: { id: number; account?: { login?: string } | null },
): Promise<Check> {
  const owner = installation.account?.login ?? `#${installation.id}`;
  const name = `${owner}/.github`;
  try {
    const { token } = (await octokit.rest.apps.createInstallationAccessToken({ installation_id: installation.id })).data;
    const asInstallation = new ProbotOctokit({
      auth: { token },
      baseUrl,
      log: quietLog,
      retry: { enabled: false },
      throttle: { enabled: false },
    });
    const repositories = await asInstallation.paginate(asInstallation.rest.apps.listReposAccessibleToInstallation, {
      per_page: 100,
    });
    return repositories.some((repo) => repo.name === ".github")
      ? { name, status: "ok", detail: "in the installation: an organization-wide .github/lisa.yml there is read" }
      : {
          name,
          status: "warn",
          detail: "not in the installation, which has selected repositories: an organization-wide config there is never read",
          fix: `If ${owner} keeps .github/lisa.yml in its .github repository, add that repository to the installation.`,
        };
  } catch (error) {
    return { name, status: "warn", detail: `could not list the installation's repositories: ${(error as Error).message}` };
  }
}

/** What an App or installation holds: its permissions by name and the events it receives. */
interface Grants {
  permissions?: Record<string, string | undefined> | undefined;
  events?: string[] | undefined;
}

/** The permissions and events `wanted` asks for that `held` lacks, as `name: level` and event names. */
function missingGrants(wanted: Required<Grants>, held: Grants): { permissions: string[]; events: string[] } {
  const rank = (level: string | undefined) => (level === "write" || level === "admin" ? 2 : level === "read" ? 1 : 0);
  return {
    permissions: Object.entries(wanted.permissions)
      .filter(([name, level]) => rank(held.permissions?.[name]) < rank(level))
      .map(([name, level]) => `${name}: ${level}`),
    events: wanted.events.filter((event) => !held.events?.includes(event)),
  };
}

async function agentChecks(name: ProviderName, env: NodeJS.ProcessEnv): Promise<Check[]> {
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
          fix: `Install it if a repository lists \`${name}\` under providers (README, “Install the agent CLIs”), or set LISA_${name.toUpperCase()}_PATH.`,
        },
    found.length
      ? { name: `${name} credentials`, status: "ok", detail: found.join(", ") }
      : {
          name: `${name} credentials`,
          status: "warn",
          detail: "none in the environment",
          fix: `Set one of ${CREDENTIALS[name].join(", ")} if ${name} is used (or put them in LISA_AGENT_HOME's CLI settings).`,
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

function printTable(checks: Check[]): void {
  const width = Math.max(...checks.map((check) => check.name.length));
  for (const check of checks) {
    process.stdout.write(`${check.status.padEnd(4)}  ${check.name.padEnd(width)}  ${check.detail}\n`);
    if (check.fix && check.status !== "ok") process.stdout.write(`${" ".repeat(6 + width)}  fix: ${check.fix}\n`);
  }
  const failed = checks.filter((check) => check.status === "FAIL").length;
  const warned = checks.filter((check) => check.status === "warn").length;
  process.stdout.write(`\n${failed} failed, ${warned} warning(s), ${checks.length - failed - warned} ok\n`);
}
