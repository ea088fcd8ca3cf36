import { describe, expect, it } from "vitest";
import { composePrTitle } from "../../src/markdown/compose-pr-title.ts";
import { DEFUSER, defuseReferences, isSafeLinkTarget, plainLiveText, stripInvisible } from "../../src/markdown/live-text.ts";
import { sanitizeMarkdown } from "../../src/markdown/sanitize-markdown.ts";
import { cleanBlock, cleanLine } from "../../src/reporting/untrusted.ts";

const Z = DEFUSER;
const options = { secrets: [], max: 2_000 };

describe("stripInvisible", () => {
  it("removes zero-width characters, bidirectional controls and the BOM", () => {
    expect(stripInvisible("ad\u200Bmin\u202Egnp.exe\u2066x\u2069\uFEFF\u00AD")).toBe("admingnp.exex");
  });
});

describe("defuseReferences", () => {
  it.each([
    ["Fixes #3", `F${Z}ixes #${Z}3`],
    ["closes acme/web#2", `c${Z}loses acme/web#${Z}2`],
    ["Resolves: https://github.com/acme/web/issues/2", `R${Z}esolves: https://github.com/acme/web/issues/2`],
    ["see #12 and GH-4", `see #${Z}12 and GH-${Z}4`],
  ])("defuses %j", (text, expected) => {
    expect(defuseReferences(text)).toBe(expected);
  });

  it.each(["C#3 is a language", "# heading", "issue#", "fixed the bug", "&#64;"])("leaves %j as it is", (text) => {
    expect(defuseReferences(text)).toBe(text);
  });
});

describe("isSafeLinkTarget", () => {
  it.each(["https://example.com/a", "http://x.test", "#section", "docs/guide.md", "/acme/api/pull/3"])("allows %s", (url) => {
    expect(isSafeLinkTarget(url)).toBe(true);
  });
  it.each([
    "javascript:alert(1)",
    " JavaScript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD4=",
    "vbscript:x",
    "file:///etc/passwd",
    "//evil.test",
  ])("refuses %s", (url) => {
    expect(isSafeLinkTarget(url)).toBe(false);
  });
});

describe("agent text as Lisa publishes it", () => {
  it("keeps a link's words and drops an unsafe target, in links, autolinks and definitions", () => {
    const clean = sanitizeMarkdown("[click](javascript:alert(1)) <data:text/html,x> [ref][r]\n\n[r]: javascript:alert(2)");
    expect(clean).not.toMatch(/javascript:alert\(|\]\(data:/);
    expect(clean).toContain("click");
  });

  it("defuses mentions, references and closing keywords in prose but not in code", () => {
    const clean = cleanBlock("Fixes #3, cc @ann.\n\n`Fixes #4 @bob`", options);
    expect(clean).toContain(`F${Z}ixes #${Z}3, cc @${Z}ann.`);
    expect(clean).toContain("`Fixes #4 @bob`");
  });

  it("removes invisible characters a stranger hid in a line, so the only ones left are Lisa's defusers", () => {
    const clean = cleanLine("safe\u202Etxt.exe \u200B@\u200Bann", options);
    expect(clean.replaceAll(`@${Z}`, "@")).toBe("safetxt.exe @ann");
  });

  it("makes the PR title and commit subject plain: one line, no invisibles, no closing keyword", () => {
    expect(composePrTitle({ title: "x" }, { title: "Fix\u200B it\nFixes #3" }, [])).toBe(`Fix it F${Z}ixes #${Z}3`);
    expect(plainLiveText("a\n\nCloses acme/web#2")).toBe(`a\n\nC${Z}loses acme/web#${Z}2`);
  });
});
