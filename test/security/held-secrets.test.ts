import { writeFileSync } from "node:fs";
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
});
