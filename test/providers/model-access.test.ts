import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { modelAccess, PLACEHOLDER_KEY } from "../../src/providers/model-access.ts";
import { tempDir } from "../support/git-fixtures.ts";

const ENDPOINT = "http://127.0.0.1:3128/capability";

/** An agents' home template holding `config` as OpenCode's global config. */
function homeWith(config: object): string {
  const home = tempDir("agent-home");
  mkdirSync(path.join(home, ".config", "opencode"), { recursive: true });
  writeFileSync(path.join(home, ".config", "opencode", "opencode.json"), JSON.stringify(config));
  return home;
}

describe("modelAccess", () => {
  it("gives Claude Code a placeholder and the endpoint for its API key, auth token or OAuth token, and keeps the real one at the proxy", () => {
    const byKey = modelAccess(
      "claude",
      { ANTHROPIC_API_KEY: "sk-ant-real", CLAUDE_CODE_OAUTH_TOKEN: "oat" },
      undefined,
      ENDPOINT,
      false,
    );
    expect(byKey.env).toEqual({ ANTHROPIC_BASE_URL: `${ENDPOINT}/anthropic`, ANTHROPIC_API_KEY: PLACEHOLDER_KEY });
    expect(byKey.withheld).toEqual(["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"]);
    expect(byKey.routes).toEqual([
      {
        id: "anthropic",
        upstream: "https://api.anthropic.com",
        paths: ["/v1/"],
        header: { name: "x-api-key", value: "sk-ant-real" },
        private: false,
      },
    ]);
    expect(byKey.direct).toEqual([]);
    const oauth = modelAccess(
      "claude",
      { CLAUDE_CODE_OAUTH_TOKEN: "oat-real", ANTHROPIC_BASE_URL: "http://127.0.0.1:4000" },
      undefined,
      ENDPOINT,
      true,
    );
    expect(oauth.env.CLAUDE_CODE_OAUTH_TOKEN).toBe(PLACEHOLDER_KEY);
    expect(oauth.routes[0]).toMatchObject({
      upstream: "http://127.0.0.1:4000",
      header: { name: "authorization", value: "Bearer oat-real" },
      private: true,
    });
  });

  it("keeps the credentials a CLI signs or fetches itself, reaching their API directly as before", () => {
    const bedrock = modelAccess("claude", { CLAUDE_CODE_USE_BEDROCK: "1", ANTHROPIC_API_KEY: "k" }, undefined, ENDPOINT, false);
    expect(bedrock).toMatchObject({ routes: [], env: {}, withheld: [], direct: ["https://api.anthropic.com"] });
    const vertex = modelAccess("gemini", { GOOGLE_GENAI_USE_VERTEXAI: "true", GOOGLE_API_KEY: "k" }, undefined, ENDPOINT, false);
    expect(vertex.routes).toEqual([]);
    expect(vertex.direct).toEqual(["https://us-central1-aiplatform.googleapis.com", "https://oauth2.googleapis.com"]);
  });

  it("gives Gemini CLI a placeholder key and its base URL at the endpoint, with its header", () => {
    const access = modelAccess("gemini", { GOOGLE_API_KEY: "AIza-real" }, undefined, ENDPOINT, false);
    expect(access.env).toEqual({ GOOGLE_GEMINI_BASE_URL: `${ENDPOINT}/gemini`, GEMINI_API_KEY: PLACEHOLDER_KEY });
    expect(access.withheld).toEqual(["GEMINI_API_KEY", "GOOGLE_API_KEY"]);
    expect(access.routes[0]).toMatchObject({
      upstream: "https://generativelanguage.googleapis.com",
      header: { name: "x-goog-api-key", value: "AIza-real" },
    });
    const bearer = modelAccess(
      "gemini",
      { GEMINI_API_KEY: "k", GEMINI_API_KEY_AUTH_MECHANISM: "bearer" },
      undefined,
      ENDPOINT,
      false,
    );
    expect(bearer.routes[0]?.header).toEqual({ name: "authorization", value: "Bearer k" });
  });

  it("points each OpenCode provider it can at the endpoint, in the config it writes into the home, and leaves the rest as they were", () => {
    const home = homeWith({
      model: "local/m",
      provider: {
        local: { npm: "@ai-sdk/openai-compatible", options: { baseURL: "http://10.0.0.7:8080/v1", apiKey: "{env:LOCAL_KEY}" } },
        vendor: { npm: "@ai-sdk/anthropic", options: { baseURL: "https://llm.example.com/v1", apiKey: "literal-key" } },
        azure: { npm: "@ai-sdk/azure", options: { baseURL: "https://x.openai.azure.com", apiKey: "{env:AZURE_KEY}" } },
      },
    });
    const access = modelAccess(
      "opencode",
      { LOCAL_KEY: "local-real", AZURE_KEY: "az", OPENAI_API_KEY: "sk-openai" },
      home,
      ENDPOINT,
      false,
    );
    const written = JSON.parse(access.homeFiles[path.join(".config", "opencode", "opencode.json")] ?? "{}");
    expect(written.model).toBe("local/m");
    expect(written.provider.local.options).toEqual({ baseURL: `${ENDPOINT}/opencode-1`, apiKey: PLACEHOLDER_KEY });
    expect(written.provider.vendor.options).toEqual({ baseURL: `${ENDPOINT}/opencode-2`, apiKey: PLACEHOLDER_KEY });
    // An SDK whose credential header Lisa does not know keeps its key and its API.
    expect(written.provider.azure.options).toEqual({ baseURL: "https://x.openai.azure.com", apiKey: "{env:AZURE_KEY}" });
    // A built-in provider that only a key in Lisa's environment selects is pointed at the endpoint too.
    expect(written.provider.openai.options).toEqual({ baseURL: `${ENDPOINT}/opencode-3`, apiKey: PLACEHOLDER_KEY });
    expect(access.routes.map((r) => [r.id, r.upstream, r.header])).toEqual([
      ["opencode-1", "http://10.0.0.7:8080/v1", { name: "authorization", value: "Bearer local-real" }],
      ["opencode-2", "https://llm.example.com/v1", { name: "x-api-key", value: "literal-key" }],
      ["opencode-3", "https://api.openai.com/v1", { name: "authorization", value: "Bearer sk-openai" }],
    ]);
    expect(access.withheld.sort()).toEqual(["LOCAL_KEY", "OPENAI_API_KEY"]);
    expect(access.env).toEqual({ LOCAL_KEY: PLACEHOLDER_KEY, OPENAI_API_KEY: PLACEHOLDER_KEY });
    expect(access.direct).toEqual(["https://x.openai.azure.com"]);
  });

  it("rewrites OPENCODE_CONFIG_CONTENT the same way, and never copies a literal key of OpenCode's config into another CLI's home", () => {
    const inline = {
      provider: {
        scripted: { npm: "@ai-sdk/anthropic", options: { baseURL: "http://127.0.0.1:4000/v1", apiKey: "inline-key" } },
      },
    };
    const access = modelAccess("opencode", { OPENCODE_CONFIG_CONTENT: JSON.stringify(inline) }, undefined, ENDPOINT, true);
    expect(JSON.parse(access.env.OPENCODE_CONFIG_CONTENT ?? "{}").provider.scripted.options).toEqual({
      baseURL: `${ENDPOINT}/opencode-1`,
      apiKey: PLACEHOLDER_KEY,
    });
    const home = homeWith({
      provider: { vendor: { options: { apiKey: "literal-key", baseURL: "https://llm.example.com/v1" } } },
    });
    const claude = modelAccess("claude", { ANTHROPIC_API_KEY: "k" }, home, ENDPOINT, false);
    const copied = claude.homeFiles[path.join(".config", "opencode", "opencode.json")] ?? "";
    expect(copied).not.toContain("literal-key");
    expect(JSON.parse(copied).provider.vendor.options.apiKey).toBe(PLACEHOLDER_KEY);
  });
});
