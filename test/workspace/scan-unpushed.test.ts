import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SecretInPushError } from "../../src/errors.ts";
import { assertNothingSecretUnpushed } from "../../src/workspace/scan-unpushed.ts";
import { createRemote, gitIn, tempDir } from "../support/git-fixtures.ts";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 1024,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const MODEL_KEY = "an-off-pattern-model-token-0123456789";
const HELD = [privateKey, ...privateKey.split("\n").filter((l) => l && !l.startsWith("-----")), MODEL_KEY];

/** A clone of a fresh remote: `origin/main` is published, what is committed here is not. */
function clone(): string {
  const remote = createRemote(tempDir("remotes"), "acme/api", "main", { "README.md": "# API\n" });
  const dir = path.join(tempDir("clone"), "api");
  gitIn(path.dirname(dir), "clone", "--quiet", remote, dir);
  return dir;
}

function commit(dir: string, files: Record<string, string>, message = "work"): string {
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(dir, file), content);
  gitIn(dir, "add", "--all");
  gitIn(dir, "commit", "--quiet", "-m", message);
  return gitIn(dir, "rev-parse", "--short=7", "HEAD").trim();
}

async function refusal(dir: string): Promise<string> {
  const error = await assertNothingSecretUnpushed(dir, HELD).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SecretInPushError);
  return (error as Error).message;
}

describe("assertNothingSecretUnpushed", () => {
  it("lets clean work through", async () => {
    const dir = clone();
    commit(dir, { "health.ts": "export const health = () => 'ok';\n" });
    await expect(assertNothingSecretUnpushed(dir, HELD)).resolves.toBeUndefined();
  });

  it("refuses a held value in a file, saying which commit and file but not the value", async () => {
    const dir = clone();
    commit(dir, { "ok.ts": "1\n" });
    const sha = commit(dir, { "config.ts": `export const token = "${MODEL_KEY}";\n` });
    const message = await refusal(dir);
    expect(message).toContain(`commit ${sha} adds a secret Lisa holds`);
    expect(message).toContain("`config.ts`");
    expect(message).not.toContain(MODEL_KEY);
  });

  it("refuses the App's key written re-wrapped, without its PEM header", async () => {
    const dir = clone();
    const body = privateKey
      .split("\n")
      .filter((l) => l && !l.startsWith("-----"))
      .join("");
    const rewrapped = body.match(/.{1,50}/g)?.join("\n") ?? "";
    commit(dir, { "key.txt": `${rewrapped}\n` });
    expect(await refusal(dir)).toContain("adds a secret Lisa holds (a key, a token or one of its own credentials) in `key.txt`");
  });

  it("refuses a secret-shaped token in a commit message", async () => {
    const dir = clone();
    const sha = commit(dir, { "a.ts": "1\n" }, `work\n\nused ghp_${"a1".repeat(20)} to test`);
    const message = await refusal(dir);
    expect(message).toContain(`commit ${sha} adds a GitHub token in its message`);
    expect(message).not.toContain("a1a1a1");
  });

  it("checks only what the push would publish: a secret already on the remote is not the push's", async () => {
    const dir = clone();
    commit(dir, { "old.txt": `${MODEL_KEY}\n` });
    gitIn(dir, "push", "--quiet", "origin", "HEAD:main");
    gitIn(dir, "fetch", "--quiet", "origin");
    commit(dir, { "new.ts": "2\n" });
    await expect(assertNothingSecretUnpushed(dir, HELD)).resolves.toBeUndefined();
  });

  it("keeps a file name from breaking out of the code span it is shown in", async () => {
    const dir = clone();
    commit(dir, { "a`b.txt": `${MODEL_KEY}\n` });
    expect(await refusal(dir)).toContain("`a'b.txt`");
  });
});

describe("assertNothingSecretUnpushed with encoded keys", () => {
  it.each([
    ["base64 at offset 0", Buffer.from(MODEL_KEY).toString("base64"), "base64-encoded"],
    ["base64 at offset 1", Buffer.from(`a${MODEL_KEY}`).toString("base64"), "base64-encoded"],
    [
      "base64 at offset 2, wrapped",
      Buffer.from(`ab${MODEL_KEY}!`)
        .toString("base64")
        .replace(/(.{10})/g, "$1\n"),
      "base64-encoded",
    ],
    ["URL-safe base64", Buffer.from(`abc${MODEL_KEY}`).toString("base64url"), "base64-encoded"],
    ["lower-case hex", Buffer.from(MODEL_KEY).toString("hex"), "hex-encoded"],
    [
      "percent-encoding mixed with plain bytes",
      MODEL_KEY.replace(/[aeiou-]/g, (c) => `%${c.charCodeAt(0).toString(16)}`),
      "URL-encoded",
    ],
  ])("refuses the key as %s", async (_, encoded, kind) => {
    const dir = clone();
    const sha = commit(dir, { "data.txt": `${encoded}\n` });
    const message = await refusal(dir);
    expect(message).toContain(
      `commit ${sha} adds a secret Lisa holds (a key, a token or one of its own credentials), ${kind} in \`data.txt\``,
    );
    expect(message).not.toContain(encoded.slice(0, 12));
  });

  it("lets a binary file through that holds no key", async () => {
    const dir = clone();
    writeFileSync(path.join(dir, "image.bin"), Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 256)));
    commit(dir, {});
    await expect(assertNothingSecretUnpushed(dir, HELD)).resolves.toBeUndefined();
  });
});
