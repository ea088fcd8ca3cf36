import { readFileSync } from "node:fs";
import path from "node:path";
import type { ProviderName } from "./registry.ts";

/** Model vendors OpenCode may be configured for: the key that selects one, its base-URL variable, and its public API. */
export const OPENCODE_VENDORS: { key: string; baseUrl?: string; api: string }[] = [
  { key: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL", api: "https://api.anthropic.com" },
  { key: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL", api: "https://api.openai.com" },
  { key: "OPENROUTER_API_KEY", api: "https://openrouter.ai" },
  { key: "GOOGLE_GENERATIVE_AI_API_KEY", api: "https://generativelanguage.googleapis.com" },
  { key: "GROQ_API_KEY", api: "https://api.groq.com" },
  { key: "MISTRAL_API_KEY", api: "https://api.mistral.ai" },
  { key: "DEEPSEEK_API_KEY", api: "https://api.deepseek.com" },
  { key: "XAI_API_KEY", api: "https://api.x.ai" },
  { key: "OPENCODE_API_KEY", api: "https://opencode.ai" },
];

/** The `baseURL` of every provider an OpenCode config (JSON) names. A config that does not parse names none. */
export function opencodeBaseUrls(text: string | undefined): string[] {
  if (!text) return [];
  try {
    const config = JSON.parse(text) as { provider?: Record<string, { options?: { baseURL?: unknown } }> };
    return Object.values(config.provider ?? {})
      .map((entry) => entry?.options?.baseURL)
      .filter((url): url is string => typeof url === "string");
  } catch {
    return [];
  }
}

export function readOrUndefined(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The model API URLs a provider's CLI talks to, from Lisa's own environment (the operator's, never
 * a repository's): its base-URL variables, else the vendor's public API; for OpenCode also the
 * `baseURL`s of the providers in its config in the agent home template or `OPENCODE_CONFIG_CONTENT`.
 */
export function modelApiUrls(provider: ProviderName, env: NodeJS.ProcessEnv, homeTemplate: string | undefined): string[] {
  switch (provider) {
    case "claude":
      return [env.ANTHROPIC_BASE_URL || "https://api.anthropic.com"];
    case "gemini": {
      if (env.GOOGLE_GENAI_USE_VERTEXAI === "true") {
        const location = env.GOOGLE_CLOUD_LOCATION || "us-central1";
        return [`https://${location}-aiplatform.googleapis.com`, "https://oauth2.googleapis.com"];
      }
      return [env.GOOGLE_GEMINI_BASE_URL || "https://generativelanguage.googleapis.com"];
    }
    case "opencode": {
      const vendors = OPENCODE_VENDORS.filter((vendor) => env[vendor.key]).map(
        (vendor) => (vendor.baseUrl && env[vendor.baseUrl]) || vendor.api,
      );
      const fromHome = homeTemplate
        ? readOrUndefined(path.join(homeTemplate, ".config", "opencode", "opencode.json"))
        : undefined;
      const fromFile = env.OPENCODE_CONFIG ? readOrUndefined(env.OPENCODE_CONFIG) : undefined;
      return [...vendors, ...[fromHome, fromFile, env.OPENCODE_CONFIG_CONTENT].flatMap(opencodeBaseUrls)];
    }
  }
}
