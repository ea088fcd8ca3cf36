import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
// @ts-expect-error: a plain ESM module without type declarations, also runnable on its own.
import { startScriptedModelServer } from "../../dev/scripted-model-server.mjs";
import { tempDir } from "./git-fixtures.ts";
import { createHelloWorld, installationTokens, labelBug } from "./hello-world.ts";

/** Where `npm install` put the real agent CLIs (agents/package.json): `claude`, `gemini`, `opencode`. */
export const AGENT_BIN = fileURLToPath(new URL("../../agents/node_modules/.bin", import.meta.url));
export const CLAUDE = path.join(AGENT_BIN, "claude");

/** The model keys in Lisa's environment: Lisa sets them at its proxy, no CLI holds them. */
export const MODEL_KEYS = { anthropic: "sk-ant-api03-scripted-test-key", gemini: "scripted-gemini-api-key" };

/** A GitHub token in Lisa's environment that no agent may ever see. */
export const LEAKABLE_TOKEN = "ghp_lisaMustNeverPassThisToTheAgent000000";

/**
 * A shell command for the agent that records its environment in `agent-env.txt` with the values of
 * credentials replaced: Lisa refuses to push a file holding its agent's model key, as it should.
 */
export const AGENT_ENV_DUMP = `env | awk -F= '$1 ~ /KEY|TOKEN|SECRET/ { print $1 "=(set)"; next } { print }' > agent-env.txt`;

/** The scripted server's OpenCode provider and model, as `.github/lisa.yml` names them. */
export const OPENCODE_MODEL = "scripted/scripted-model";

/**
 * Gemini CLI settings for offline runs: the API-key auth method (with `GOOGLE_GEMINI_BASE_URL` set and
 * no method chosen, headless runs exit 41), one attempt per request (the default is 10, with backoff
 * from 5 s), and no usage statistics (Clearcut), telemetry, IDE or update checks.
 * Folder trust is left alone: Lisa passes `--skip-trust`.
 */
const GEMINI_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  ide: { enabled: false },
  tools: { useRipgrep: false },
};

/**
 * OpenCode's global config: one custom provider on its bundled Anthropic SDK pointed at the scripted
 * server (whose error answers carry `retry-after: 0`, which keeps OpenCode's five retries instant),
 * and no other provider, so a mistake can never fall through to opencode.ai.
 */
function opencodeConfig(serverUrl: string) {
  const [provider, model] = OPENCODE_MODEL.split("/") as [string, string];
  return {
    $schema: "https://opencode.ai/config.json",
    model: OPENCODE_MODEL,
    small_model: OPENCODE_MODEL,
    enabled_providers: [provider],
    autoupdate: false,
    share: "disabled",
    provider: {
      [provider]: {
        name: "Scripted",
        npm: "@ai-sdk/anthropic",
        // Lisa sets the key at its proxy and points the base URL at it; the SDK appends /messages.
        options: { baseURL: `${serverUrl}/v1`, apiKey: "{env:ANTHROPIC_API_KEY}" },
        models: {
          [model]: {
            name: "Scripted Model",
            tool_call: true,
            limit: { context: 200000, output: 8192 },
            cost: { input: 3, output: 15 },
          },
        },
      },
    },
  };
}

/** A fresh HOME holding each CLI's settings. */
function agentHome(serverUrl: string): string {
  const home = tempDir("agent-home");
  mkdirSync(path.join(home, ".gemini"));
  writeFileSync(path.join(home, ".gemini", "settings.json"), JSON.stringify(GEMINI_SETTINGS, null, 2));
  const opencode = path.join(home, ".config", "opencode");
  // With these in place OpenCode does not `npm install @opencode-ai/plugin` into its config dir on first run.
  mkdirSync(path.join(opencode, "node_modules"), { recursive: true });
  const dependencies = { "@opencode-ai/plugin": "1.18.33" };
  writeFileSync(path.join(opencode, "package.json"), JSON.stringify({ dependencies }));
  writeFileSync(
    path.join(opencode, "package-lock.json"),
    JSON.stringify({ lockfileVersion: 3, packages: { "": { dependencies } } }),
  );
  writeFileSync(path.join(opencode, "opencode.json"), JSON.stringify(opencodeConfig(serverUrl), null, 2));
  return home;
}

/**
 * The environment Lisa picks agents' environments from: what the three real CLIs need to run offline
 * against the scripted server at `serverUrl`, their binaries on PATH under their usual names, and a
 * GitHub token that the allowlist must keep from them.
 */
export function agentEnvSource(serverUrl: string): NodeJS.ProcessEnv {
  const home = agentHome(serverUrl);
  return {
    PATH: `${AGENT_BIN}${path.delimiter}${process.env.PATH}`,
    HOME: home,
    // Sandboxed sessions get a fresh home seeded from this one.
    LISA_AGENT_HOME: home,
    // The scripted server is on 127.0.0.1: the operator's opt-in lets the proxy reach exactly its address and port.
    LISA_ALLOW_PRIVATE_MODEL_API: "true",
    TMPDIR: tempDir("agent-tmp"),
    // Claude Code; OpenCode's config reads the same key.
    ANTHROPIC_BASE_URL: serverUrl,
    ANTHROPIC_API_KEY: MODEL_KEYS.anthropic,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
    // CI runs as root, where Claude Code refuses to skip permissions outside a declared sandbox.
    IS_SANDBOX: "1",
    // Gemini CLI. No relaunch: the CLI otherwise restarts itself in a child process for memory tuning.
    GEMINI_API_KEY: MODEL_KEYS.gemini,
    GOOGLE_GEMINI_BASE_URL: serverUrl,
    GEMINI_CLI_NO_RELAUNCH: "true",
    // OpenCode: no models catalogue, updates, sharing, LSP downloads or plugins from the network.
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
    GITHUB_TOKEN: LEAKABLE_TOKEN,
  };
}

/** What the scripted server records of each request, as the e2e tests read it. */
export interface ModelServer {
  url: string;
  requests: {
    path: string;
    kind?: "main" | "side";
    answer?: string;
    headers?: Record<string, string | string[] | undefined>;
    body?: Record<string, unknown>;
  }[];
  toolResults(): { name?: string; is_error: boolean; content: string }[];
  close(): Promise<void>;
}

/** Starts a scripted model server when a test asks for one, and closes it after that test. */
export function useModelServer() {
  let current: ModelServer | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return {
    async start(script: object): Promise<ModelServer> {
      current = (await startScriptedModelServer({ quiet: true, script })) as ModelServer;
      return current;
    },
    /** The server the running test started. */
    get current(): ModelServer {
      if (!current) throw new Error("no model server started in this test");
      return current;
    },
  };
}

/**
 * How many connections Lisa's egress proxy let through and refused, by who asked, from `/metrics`:
 * `{ "claude allowed": 4 }`. A sandboxed CLI has no other way to the model server.
 */
export async function sandboxConnections(env: EmulatedLisa): Promise<Record<string, number>> {
  let text = "";
  const response = { writeHead: () => response, end: (body: string) => (text = body) };
  await env.lisa.httpHandler({ method: "GET", url: "/metrics" } as never, response as never);
  const counts: Record<string, number> = {};
  for (const [, who, outcome, n] of text.matchAll(/^lisa_sandbox_connections_total\{who="(\w+)",outcome="(\w+)"\} (\d+)$/gm))
    counts[`${who} ${outcome}`] = Number(n);
  return counts;
}

/** Lisa against the GitHub emulator, and the installation tokens the emulator has handed it. */
export type RealCliLisa = EmulatedLisa & { tokens: string[] };

/**
 * Lisa with the real CLIs on PATH against the GitHub emulator, on Codertocat's Hello-World (issue
 * #1), stopped after each test.
 */
export function useRealCliLisa() {
  let current: EmulatedLisa | undefined;
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  return {
    /**
     * Starts Lisa talking to the model server at `serverUrl`, the repository holding `config`; `env`
     * changes Lisa's environment (an undefined value removes a variable).
     */
    async start(serverUrl: string, config: string, claudeBinary = CLAUDE, env: NodeJS.ProcessEnv = {}): Promise<RealCliLisa> {
      const source = Object.fromEntries(
        Object.entries({ ...agentEnvSource(serverUrl), ...env }).filter(([, value]) => value !== undefined),
      );
      current = await startEmulatedLisa({ claudeBinary, agentEnvSource: source });
      await createHelloWorld(current.github, config);
      await current.settle();
      return Object.assign(current, { tokens: installationTokens(current.github) });
    },
    /** Starts Lisa, labels issue #1, and returns once everything that caused is done. */
    async deliver(server: ModelServer, config: string, env: NodeJS.ProcessEnv = {}): Promise<RealCliLisa> {
      const lisa = await this.start(server.url, config, CLAUDE, env);
      await labelBug(lisa);
      return lisa;
    },
  };
}
