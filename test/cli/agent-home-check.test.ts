import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { agentHomeCheck } from "../../src/cli/doctor/agent-home-check.ts";
import { tempDir } from "../support/git-fixtures.ts";

describe("agentHomeCheck", () => {
  it("passes a home template whose CLI settings only name where credentials are", () => {
    const home = tempDir("agent-home");
    mkdirSync(path.join(home, ".config", "opencode"), { recursive: true });
    writeFileSync(
      path.join(home, ".config", "opencode", "opencode.json"),
      '{"provider":{"a":{"options":{"apiKey":"{env:ANTHROPIC_API_KEY}"}}}}',
    );
    expect(agentHomeCheck({ LISA_AGENT_HOME: home })).toEqual([
      { name: "agent home template", status: "ok", detail: `${home}: no credentials in its files` },
    ]);
    expect(agentHomeCheck({})).toEqual([]);
  });

  it("fails one that still holds a credential, naming the files and never the values", () => {
    const home = tempDir("agent-home");
    mkdirSync(path.join(home, ".gemini"));
    writeFileSync(path.join(home, ".gemini", ".env"), "GEMINI_API_KEY=AIza-still-in-the-template\n");
    writeFileSync(
      path.join(home, ".gemini", "settings.json"),
      '{"mcpServers":{"x":{"env":{"TRACKER_TOKEN":"mcp-token-value"}}}}',
    );
    const [check] = agentHomeCheck({ LISA_AGENT_HOME: home });
    expect(check?.status).toBe("FAIL");
    expect(check?.detail).toContain(".gemini/.env (1)");
    expect(check?.detail).toContain(".gemini/settings.json (1)");
    expect(JSON.stringify(check)).not.toMatch(/AIza-still|mcp-token-value/);
    expect(check?.fix).toContain("{env:NAME}");
  });
});
