import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.ts";
import { modelAccess } from "../../src/providers/model-access.ts";
import { modelApiUrls } from "../../src/providers/model-hosts.ts";
import type { RunContext } from "../../src/workflow/context/run-context.ts";
import { agentEgress, gateEgress } from "../../src/workflow/session/network-egress.ts";
import { tempDir } from "../support/git-fixtures.ts";

describe("modelApiUrls", () => {
  it("takes each CLI's base URL from Lisa's environment, else its vendor's public API", () => {
    expect(modelApiUrls("claude", {}, undefined)).toEqual(["https://api.anthropic.com"]);
    expect(modelApiUrls("claude", { ANTHROPIC_BASE_URL: "https://gateway.example.com/anthropic" }, undefined)).toEqual([
      "https://gateway.example.com/anthropic",
    ]);
    expect(modelApiUrls("gemini", {}, undefined)).toEqual(["https://generativelanguage.googleapis.com"]);
    expect(
      modelApiUrls("gemini", { GOOGLE_GENAI_USE_VERTEXAI: "true", GOOGLE_CLOUD_LOCATION: "europe-west4" }, undefined),
    ).toEqual(["https://europe-west4-aiplatform.googleapis.com", "https://oauth2.googleapis.com"]);
  });

  it("gives OpenCode the vendors whose keys are set and the baseURL of each provider in its config", () => {
    const home = tempDir("agent-home");
    mkdirSync(path.join(home, ".config", "opencode"), { recursive: true });
    const config = { provider: { local: { options: { baseURL: "http://10.0.0.7:8080/v1" } }, other: { options: {} } } };
    writeFileSync(path.join(home, ".config", "opencode", "opencode.json"), JSON.stringify(config));
    const env = { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k", OPENAI_BASE_URL: "https://openai.gateway.example" };
    expect(modelApiUrls("opencode", env, home)).toEqual([
      "https://api.anthropic.com",
      "https://openai.gateway.example",
      "http://10.0.0.7:8080/v1",
    ]);
    expect(modelApiUrls("opencode", { OPENCODE_CONFIG_CONTENT: "not json" }, undefined)).toEqual([]);
  });
});

/** Just what the egress rules read of a run. */
function contextWith(yaml: object, privateModelApi: boolean, env: NodeJS.ProcessEnv): RunContext {
  return {
    deps: {
      sandbox: { mode: "bwrap", privateModelApi },
      agentEnvSource: env,
      log: { warn: () => undefined },
      metrics: { sandboxConnection: () => undefined },
    },
    config: parseConfig(yaml),
    run: { id: 1 },
    network: new Map(),
  } as unknown as RunContext;
}

describe("the egress rules of a session", () => {
  const env = { ANTHROPIC_BASE_URL: "http://127.0.0.1:4000" };

  it("lets an agent's model API be private only when the operator allows private model APIs", () => {
    const allowHosts = { sandbox: { allow_hosts: ["registry.npmjs.org"] } };
    expect(agentEgress(contextWith(allowHosts, false, env), 1, "claude").rules).toEqual([
      { host: "127.0.0.1", port: 4000 },
      { host: "registry.npmjs.org", port: 443 },
      { host: "registry.npmjs.org", port: 80 },
    ]);
    expect(agentEgress(contextWith(allowHosts, true, env), 1, "claude").rules[0]).toEqual({
      host: "127.0.0.1",
      port: 4000,
      private: true,
    });
  });

  it("with the model API's credential at Lisa's proxy, lets no CONNECT reach the API, and grants the session's routes to its endpoint only", () => {
    const allowHosts = { sandbox: { allow_hosts: ["registry.npmjs.org:443"] } };
    const source = { ...env, ANTHROPIC_API_KEY: "sk-ant-real" };
    const access = modelAccess("claude", source, undefined, "http://127.0.0.1:3128/cap", true);
    const egress = agentEgress(contextWith(allowHosts, true, source), 1, "claude", { access, capability: "cap" });
    expect(egress.rules).toEqual([{ host: "registry.npmjs.org", port: 443 }]);
    expect(egress.models).toEqual({ capability: "cap", routes: access.routes });
  });

  it("gives gates no network, or only allow_hosts with gate_network, never the model API", () => {
    expect(gateEgress(contextWith({ sandbox: { allow_hosts: ["registry.npmjs.org"] } }, true, env), 1)).toBeUndefined();
    const open = gateEgress(contextWith({ sandbox: { allow_hosts: ["pypi.org:443"], gate_network: true } }, true, env), 1);
    expect(open?.rules).toEqual([{ host: "pypi.org", port: 443 }]);
  });
});
