import { describe, expect, it } from "vitest";
import { REDACTED, redactSecrets } from "../../src/markdown/redact-secrets.ts";
import { sanitizeMarkdown } from "../../src/markdown/sanitize-markdown.ts";

const JWT = `${"eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9".repeat(3)}.${"eyJpc3MiOiJnaXRodWIiLCJpbnN0YWxsYXRpb24iOjF9".repeat(6)}.${"c2lnbmF0dXJl".repeat(20)}`;

describe("redactSecrets", () => {
  it.each([
    ["classic personal access token", `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`],
    ["OAuth token", `gho_${"x".repeat(36)}`],
    ["user-to-server token", `ghu_${"Y9".repeat(18)}`],
    ["installation token, 40-character format", `ghs_${"k".repeat(36)}`],
    ["installation token, long stateless format", `ghs_123456_${JWT}`],
    ["refresh token", `ghr_${"r".repeat(76)}`],
    ["fine-grained personal access token", `github_pat_11ABCDEFG0${"z".repeat(72)}`],
    ["Anthropic API key", `sk-ant-api03-${"q".repeat(90)}AA`],
    ["OpenAI project key", `sk-proj-${"p".repeat(48)}`],
    ["Google API key", `AIzaSy${"g".repeat(33)}`],
    ["private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"],
  ])("redacts a %s", (_kind, secret) => {
    const redacted = redactSecrets(`before ${secret} after`);
    expect(redacted).toBe(`before ${REDACTED} after`);
  });

  it("redacts known values whatever their shape", () => {
    expect(redactSecrets("key=hunter2hunter2 ok", ["hunter2hunter2"])).toBe(`key=${REDACTED} ok`);
  });

  it("leaves ordinary text and short known values alone", () => {
    expect(redactSecrets("the task list is ok", ["ok"])).toBe("the task list is ok");
  });
});

describe("sanitizeMarkdown", () => {
  it("removes raw HTML blocks, inline tags and images, keeping their text", () => {
    const clean = sanitizeMarkdown(
      'Intro <b>bold</b> text\n\n<script>alert("x")</script>\n\n<details><summary>x</summary>hidden</details>\n\n![pixel](https://tracker.example/p.gif)\n\nEnd',
    );
    expect(clean).toBe("Intro bold text\n\nEnd");
  });

  it("normalizes bullets to dashes", () => {
    expect(sanitizeMarkdown("* one\n* two\n    + nested")).toBe("- one\n- two\n  - nested");
  });

  it("pushes headings down to the minimum depth", () => {
    expect(sanitizeMarkdown("# Big\n\n## Smaller\n\n##### Tiny", { minHeadingDepth: 3 })).toBe(
      "### Big\n\n### Smaller\n\n##### Tiny",
    );
  });

  it("turns a wall of text into a list of sentences", () => {
    const wall = Array.from(
      { length: 6 },
      (_, i) => `Sentence number ${i + 1} explains one more part of this change in detail.`,
    ).join(" ");
    const clean = sanitizeMarkdown(wall);
    expect(clean.split("\n")).toHaveLength(6);
    expect(clean.split("\n").every((line) => line.startsWith("- Sentence number"))).toBe(true);
  });

  it("keeps short paragraphs as they are", () => {
    expect(sanitizeMarkdown("Short. Two sentences.")).toBe("Short. Two sentences.");
  });

  it("fits the result into the length limit, cutting at a line", () => {
    const long = Array.from({ length: 500 }, (_, i) => `- item ${i}`).join("\n");
    const clean = sanitizeMarkdown(long, { maxLength: 1_000 });
    expect(clean.length).toBeLessThanOrEqual(1_000);
    expect(clean).toMatch(/_…truncated to fit GitHub's length limit._\n$/);
  });

  it("redacts secrets, including ones split by markup", () => {
    const token = `ghs_${"k".repeat(36)}`;
    const clean = sanitizeMarkdown(`Token: **${token}** and \`${token}\``);
    expect(clean).not.toContain(token);
    expect(clean).toContain(REDACTED);
  });
});
