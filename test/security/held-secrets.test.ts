import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { heldSecrets } from "../../src/security/held-secrets.ts";
import { tempDir } from "../support/git-fixtures.ts";

const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAline1xxxxxxxx\nline2yyyyyyyyyyyyyy\n-----END RSA PRIVATE KEY-----";

describe("heldSecrets", () => {
  it("holds the App's key whole and line by line, the webhook secret and every credential-named value", () => {
    const held = heldSecrets({
      PRIVATE_KEY: PEM.replaceAll("\n", "\\n"),
      WEBHOOK_SECRET: "webhook-secret-value",
      GITHUB_CLIENT_SECRET: "client-secret-value",
      ANTHROPIC_AUTH_TOKEN: "off-pattern-auth-token",
      OPENAI_API_KEY: "openai-key-value",
      DB_PASSWORD: "hunter2hunter2",
      PATH: "/usr/bin:/bin",
      PRIVATE_KEY_PATH: "/etc/lisa/key.pem",
      SHORT_TOKEN: "abc",
    });
    expect(held).toEqual(
      expect.arrayContaining([
        PEM,
        "MIIEowIBAAKCAQEAline1xxxxxxxx",
        "line2yyyyyyyyyyyyyy",
        "webhook-secret-value",
        "client-secret-value",
        "off-pattern-auth-token",
        "openai-key-value",
        "hunter2hunter2",
      ]),
    );
    // Not secrets: where a key is kept, a PATH, values too short to be one.
    expect(held).not.toContain("/usr/bin:/bin");
    expect(held).not.toContain("/etc/lisa/key.pem");
    expect(held).not.toContain("abc");
  });

  it("reads the key that PRIVATE_KEY_PATH names", () => {
    const file = path.join(tempDir("key"), "app.pem");
    writeFileSync(file, `${PEM}\n`);
    expect(heldSecrets({ PRIVATE_KEY_PATH: file })).toContain(PEM);
  });

  it("holds the credentials written into the agents' home template and OpenCode's config, not the references to them", () => {
    const home = tempDir("home-template");
    mkdirSync(path.join(home, ".gemini"));
    writeFileSync(path.join(home, ".gemini", ".env"), "export GEMINI_API_KEY=gemini-key-in-a-dotenv\nDEBUG=true\n");
    writeFileSync(
      path.join(home, ".gemini", "settings.json"),
      JSON.stringify({
        mcpServers: { x: { env: { TRACKER_TOKEN: "mcp-token-in-settings" } } },
        security: { auth: { selectedType: "gemini-api-key" } },
      }),
    );
    mkdirSync(path.join(home, ".config", "opencode"), { recursive: true });
    const opencode = {
      provider: { a: { options: { apiKey: "{env:ANTHROPIC_API_KEY}" } }, b: { options: { apiKey: "literal-opencode-key" } } },
    };
    writeFileSync(path.join(home, ".config", "opencode", "opencode.json"), JSON.stringify(opencode));
    const configFile = path.join(home, "lisa-opencode.json");
    writeFileSync(configFile, JSON.stringify({ provider: { c: { options: { apiKey: "key-in-opencode-config-file" } } } }));
    const held = heldSecrets(
      {
        OPENCODE_CONFIG: configFile,
        OPENCODE_CONFIG_CONTENT: JSON.stringify({
          provider: { d: { options: { headers: { Authorization: "Bearer inline-bearer-value" } } } },
        }),
      },
      home,
    );
    expect(held).toEqual(
      expect.arrayContaining([
        "gemini-key-in-a-dotenv",
        "mcp-token-in-settings",
        "literal-opencode-key",
        "key-in-opencode-config-file",
        "Bearer inline-bearer-value",
      ]),
    );
    expect(held).not.toContain("{env:ANTHROPIC_API_KEY}");
    expect(held).not.toContain("gemini-api-key");
    expect(held).not.toContain("true");
  });
});
