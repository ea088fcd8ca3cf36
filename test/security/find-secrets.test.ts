import { describe, expect, it } from "vitest";
import { normalizeText } from "../../src/markdown/normalize-text.ts";
import { REDACTED, redactSecrets } from "../../src/markdown/redact-secrets.ts";
import { findSecrets, HELD_KIND } from "../../src/security/find-secrets.ts";

const KEY = "model-key-0f1e2d3c4b5a69788796a5b4c3d2e1f0";
const TOKEN = `ghp_${"A1b2C3d4E5".repeat(4)}`;
const cut = (secret: string, mark: string) => `${secret.slice(0, 13)}${mark}${secret.slice(13)}`;

describe("normalizeText", () => {
  it("removes terminal codes whole, every control and format character but line breaks and tabs, and folds Unicode", () => {
    expect(normalizeText("a\u001b[31mred\u001b[0m\u0007\u0000b\u00adc\u200bd\u202Ee\uFEFF\tf\r\ng")).toBe("aredbcde\tf\ng");
    expect(normalizeText("\u001b]0;title\u0007x\u001b]8;;https://x\u001b\\y")).toBe("xy");
    expect(normalizeText("ｇｈｐ＿ ﬁ x²")).toBe("ghp_ fi x2");
  });
});

describe("redactSecrets", () => {
  it.each([
    ["ESC", "\u001b[0m"],
    ["BEL", "\u0007"],
    ["NUL", "\u0000"],
    ["a soft hyphen", "\u00ad"],
    ["a zero-width space", "\u200b"],
    ["a right-to-left override", "\u202e"],
  ])("redacts a held value cut by %s, which a later step or a reader would remove", (_name, mark) => {
    expect(redactSecrets(`key ${cut(KEY, mark)} ok`, [KEY])).toBe(`key ${REDACTED} ok`);
    expect(redactSecrets(`token ${cut(TOKEN, mark)} ok`)).toBe(`token ${REDACTED} ok`);
  });

  it.each([
    ["base64", Buffer.from(KEY).toString("base64")],
    ["base64, one byte in", Buffer.from(`=${KEY}`).toString("base64")],
    ["base64, two bytes in", Buffer.from(`:=${KEY}`).toString("base64url")],
    ["hex", Buffer.from(KEY).toString("hex").toUpperCase()],
    ["percent-encoded", [...KEY].map((c, i) => (i % 2 ? `%${c.charCodeAt(0).toString(16)}` : c)).join("")],
    ["reversed", [...KEY].reverse().join("")],
    ["cut across lines", `${KEY.slice(0, 20)}\n${KEY.slice(20)}`],
  ])("redacts a held value written %s", (_name, form) => {
    const redacted = redactSecrets(`before ${form} after`, [KEY]);
    expect(redacted).toContain(REDACTED);
    expect(redacted).toMatch(/^before .*after$/s);
    expect(redacted).not.toContain(form);
  });

  it.each([
    ["base64", Buffer.from(`Authorization: ${TOKEN}`).toString("base64")],
    ["hex", Buffer.from(TOKEN).toString("hex")],
    ["reversed", [...TOKEN].reverse().join("")],
    ["percent-encoded", encodeURIComponent(`token: ${TOKEN}`).replaceAll("_", "%5F")],
  ])("redacts a secret shape written %s", (_name, form) => {
    expect(redactSecrets(`x ${form} y`)).toBe(`x ${REDACTED} y`);
  });

  it("leaves ordinary text, a commit id and Lisa's own words alone", () => {
    const text = "Ran `npm test` on 0123456789abcdef0123456789abcdef01234567: 12 passed, see src/markdown/redact-secrets.ts.";
    expect(redactSecrets(text, [KEY])).toBe(text);
  });
});

describe("findSecrets", () => {
  it("names the form it found each held value in, without its value", () => {
    const text = `${Buffer.from(KEY).toString("hex")} ${[...KEY].reverse().join("")}`;
    expect(findSecrets(text, [KEY]).map((found) => found.kind)).toEqual(
      expect.arrayContaining([`${HELD_KIND}, hex-encoded`, `${HELD_KIND}, reversed`]),
    );
  });
});
