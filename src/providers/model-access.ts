import path from "node:path";
import type { ModelRoute } from "../sandbox/model-credentials.ts";
import { modelApiUrls, OPENCODE_VENDORS, opencodeBaseUrls, readOrUndefined } from "./model-hosts.ts";
import type { ProviderName } from "./registry.ts";

// How each CLI reaches its model API with a credential it never holds (docs/security-model.md): its base URL
// points at Lisa's model endpoint inside the sandbox and its key is a placeholder; Lisa's egress
// proxy forwards to the real API and sets the real credential. What a CLI cannot do that way keeps
// its credential as before (docs/security-model.md names each case).

/** What a CLI holds where its key would be. Not a secret: the same in every session, worthless without the session's capability. */
export const PLACEHOLDER_KEY = "lisa-sets-the-key-at-its-proxy";

/** What a sandboxed session of one CLI is given instead of its model credentials. */
export interface ModelAccess {
  /** The model APIs Lisa's endpoint forwards to, with the real credentials (they stay in Lisa). */
  routes: ModelRoute[];
  /** Variables the CLI gets: base URLs that lead to the endpoint, placeholders for keys. */
  env: Record<string, string>;
  /** The provider's variables that must not reach it: their values are at the proxy. */
  withheld: string[];
  /** Files written into its home over the template's copy: a CLI config whose providers point at the endpoint. */
  homeFiles: Record<string, string>;
  /** Model API URLs the CLI still reaches itself, with a credential of its own, for its egress rules. */
  direct: string[];
}

const OPENCODE_CONFIG_FILE = path.join(".config", "opencode", "opencode.json");

/** The credential header each AI SDK package sends; a package not listed here is not proxied. */
const SDK_HEADERS: Record<string, "x-api-key" | "x-goog-api-key" | "authorization"> = {
  "@ai-sdk/anthropic": "x-api-key",
  "@ai-sdk/google": "x-goog-api-key",
  "@ai-sdk/openai": "authorization",
  "@ai-sdk/openai-compatible": "authorization",
  "@ai-sdk/groq": "authorization",
  "@ai-sdk/mistral": "authorization",
  "@ai-sdk/deepseek": "authorization",
  "@ai-sdk/xai": "authorization",
  "@openrouter/ai-sdk-provider": "authorization",
};

/** OpenCode's built-in providers that a key in Lisa's environment selects, with their SDK's default base URL. */
const OPENCODE_BUILT_IN: Record<string, { key: string; base: string; npm: string }> = {
  anthropic: { key: "ANTHROPIC_API_KEY", base: "https://api.anthropic.com/v1", npm: "@ai-sdk/anthropic" },
  openai: { key: "OPENAI_API_KEY", base: "https://api.openai.com/v1", npm: "@ai-sdk/openai" },
};

const headerFor = (name: "x-api-key" | "x-goog-api-key" | "authorization", value: string) => ({
  name,
  value: name === "authorization" ? `Bearer ${value}` : value,
});

const kept = (direct: string[]): ModelAccess => ({ routes: [], env: {}, withheld: [], homeFiles: {}, direct });

function claudeAccess(env: NodeJS.ProcessEnv, endpoint: string, allowPrivate: boolean): ModelAccess | undefined {
  // Bedrock and Vertex sign each request with the cloud's own credentials, inside the CLI.
  if (env.CLAUDE_CODE_USE_BEDROCK || env.CLAUDE_CODE_USE_VERTEX) return undefined;
  const [name, header] =
    (
      [
        ["ANTHROPIC_API_KEY", "x-api-key"],
        ["ANTHROPIC_AUTH_TOKEN", "authorization"],
        ["CLAUDE_CODE_OAUTH_TOKEN", "authorization"],
      ] as const
    ).find(([variable]) => env[variable]?.trim()) ?? [];
  if (!name || !header) return undefined;
  const route = {
    id: "anthropic",
    upstream: env.ANTHROPIC_BASE_URL || "https://api.anthropic.com",
    paths: ["/v1/"],
    header: headerFor(header, env[name]?.trim() ?? ""),
    private: allowPrivate,
  };
  return {
    routes: [route],
    // The placeholder goes in the variable the credential came from: an OAuth token makes Claude Code say so to the API.
    env: { ANTHROPIC_BASE_URL: `${endpoint}/anthropic`, [name]: PLACEHOLDER_KEY },
    withheld: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"],
    homeFiles: {},
    direct: [],
  };
}

function geminiAccess(env: NodeJS.ProcessEnv, endpoint: string, allowPrivate: boolean): ModelAccess | undefined {
  // Vertex AI authenticates with Google Cloud's own credentials (a service account's), inside the CLI.
  if (env.GOOGLE_GENAI_USE_VERTEXAI === "true") return undefined;
  const name = (["GEMINI_API_KEY", "GOOGLE_API_KEY"] as const).find((variable) => env[variable]?.trim());
  if (!name) return undefined;
  const header = env.GEMINI_API_KEY_AUTH_MECHANISM === "bearer" ? "authorization" : "x-goog-api-key";
  const route = {
    id: "gemini",
    upstream: env.GOOGLE_GEMINI_BASE_URL || "https://generativelanguage.googleapis.com",
    paths: ["/v1beta/", "/v1/", "/v1alpha/"],
    header: headerFor(header, env[name]?.trim() ?? ""),
    private: allowPrivate,
  };
  return {
    routes: [route],
    env: { GOOGLE_GEMINI_BASE_URL: `${endpoint}/gemini`, GEMINI_API_KEY: PLACEHOLDER_KEY },
    withheld: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    homeFiles: {},
    direct: [],
  };
}

interface OpencodeProvider {
  npm?: unknown;
  options?: { baseURL?: unknown; apiKey?: unknown; [option: string]: unknown };
  [field: string]: unknown;
}
type OpencodeConfig = { provider?: Record<string, OpencodeProvider>; [field: string]: unknown };

function parseConfig(text: string | undefined): OpencodeConfig | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as OpencodeConfig) : undefined;
  } catch {
    return undefined;
  }
}

/** The variable an `{env:NAME}` reference names. */
const referenced = (value: unknown) =>
  typeof value === "string" ? /^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value)?.[1] : undefined;

/**
 * OpenCode: each provider of its config (the home template's `opencode.json`, `OPENCODE_CONFIG_CONTENT`)
 * with a key Lisa can read (literal, or `{env:NAME}` of Lisa's environment), a base URL (its own,
 * or a built-in provider's) and an SDK whose header Lisa knows is pointed at the endpoint with the
 * placeholder for its key; so is a built-in provider that only a key in Lisa's environment selects.
 * Any other keeps its key and its API as before.
 */
function opencodeAccess(env: NodeJS.ProcessEnv, home: string | undefined, endpoint: string, allowPrivate: boolean): ModelAccess {
  const access: ModelAccess = { routes: [], env: {}, withheld: [], homeFiles: {}, direct: [] };
  const withheld = new Set<string>();
  const stillNeeded = new Set<string>();
  const route = (upstream: string, header: ReturnType<typeof headerFor>) => {
    const id = `opencode-${access.routes.length + 1}`;
    access.routes.push({ id, upstream, paths: ["/"], header, private: allowPrivate });
    return `${endpoint}/${id}`;
  };
  const rewrite = (config: OpencodeConfig, addBuiltIns: boolean) => {
    for (const [id, entry] of Object.entries(config.provider ?? {})) {
      const options = entry.options ?? {};
      const builtIn = OPENCODE_BUILT_IN[id];
      const variable = referenced(options.apiKey) ?? (options.apiKey === undefined ? builtIn?.key : undefined);
      const key = variable ? env[variable]?.trim() : typeof options.apiKey === "string" ? options.apiKey : undefined;
      const base = typeof options.baseURL === "string" ? options.baseURL : builtIn?.base;
      const sdk = SDK_HEADERS[typeof entry.npm === "string" ? entry.npm : (builtIn?.npm ?? "")];
      if (!key || !base || !sdk) {
        if (variable) stillNeeded.add(variable);
        if (base) access.direct.push(base);
        continue;
      }
      entry.options = { ...options, baseURL: route(base, headerFor(sdk, key)), apiKey: PLACEHOLDER_KEY };
      if (variable) withheld.add(variable);
    }
    if (!addBuiltIns) return;
    for (const [id, builtIn] of Object.entries(OPENCODE_BUILT_IN)) {
      const key = env[builtIn.key]?.trim();
      if (!key || config.provider?.[id]) continue;
      const baseURL = route(builtIn.base, headerFor(SDK_HEADERS[builtIn.npm] ?? "authorization", key));
      config.provider = { ...config.provider, [id]: { options: { baseURL, apiKey: PLACEHOLDER_KEY } } };
      withheld.add(builtIn.key);
    }
  };
  const fromHome = home ? readOrUndefined(path.join(home, OPENCODE_CONFIG_FILE)) : undefined;
  const homeConfig = parseConfig(fromHome) ?? (fromHome === undefined ? {} : undefined);
  if (homeConfig) {
    rewrite(homeConfig, true);
    if (fromHome !== undefined || access.routes.length > 0)
      access.homeFiles[OPENCODE_CONFIG_FILE] = JSON.stringify(homeConfig, null, 2);
  }
  const inline = parseConfig(env.OPENCODE_CONFIG_CONTENT);
  if (inline) {
    rewrite(inline, false);
    access.env.OPENCODE_CONFIG_CONTENT = JSON.stringify(inline);
  }
  // Vendors OpenCode reaches with keys of their own (no SDK default known here), and OPENCODE_CONFIG's providers.
  for (const vendor of OPENCODE_VENDORS)
    if (env[vendor.key] && !withheld.has(vendor.key)) access.direct.push((vendor.baseUrl && env[vendor.baseUrl]) || vendor.api);
  access.direct.push(...opencodeBaseUrls(readOrUndefined(env.OPENCODE_CONFIG)));
  access.withheld = [...withheld].filter((name) => !stillNeeded.has(name));
  for (const name of access.withheld) access.env[name] = PLACEHOLDER_KEY;
  return access;
}

/** The home template's OpenCode config with every literal key replaced by the placeholder, for a CLI that does not use it. */
function opencodeWithoutKeys(home: string | undefined): Record<string, string> {
  const text = home ? readOrUndefined(path.join(home, OPENCODE_CONFIG_FILE)) : undefined;
  const config = parseConfig(text);
  if (!config?.provider) return {};
  let changed = false;
  for (const entry of Object.values(config.provider)) {
    if (typeof entry.options?.apiKey === "string" && !referenced(entry.options.apiKey)) {
      entry.options.apiKey = PLACEHOLDER_KEY;
      changed = true;
    }
  }
  return changed ? { [OPENCODE_CONFIG_FILE]: JSON.stringify(config, null, 2) } : {};
}

/**
 * How a sandboxed session of `provider` reaches its model API: through `endpoint` (the session's
 * model endpoint URL, capability included) for every credential Lisa can set at its proxy, directly
 * with its own key otherwise. `env` and `home` are Lisa's environment and the agents' home template.
 */
export function modelAccess(
  provider: ProviderName,
  env: NodeJS.ProcessEnv,
  home: string | undefined,
  endpoint: string,
  allowPrivate: boolean,
): ModelAccess {
  if (provider === "opencode") return opencodeAccess(env, home, endpoint, allowPrivate);
  const access =
    (provider === "claude" ? claudeAccess(env, endpoint, allowPrivate) : geminiAccess(env, endpoint, allowPrivate)) ??
    kept(modelApiUrls(provider, env, home));
  // OpenCode's config in the template is copied into every home: its literal keys never are.
  return { ...access, homeFiles: { ...opencodeWithoutKeys(home), ...access.homeFiles } };
}
