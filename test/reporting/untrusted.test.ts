import { describe, expect, it } from "vitest";
import { REDACTED } from "../../src/markdown/redact-secrets.ts";
import { CUT_NOTE, cutMarkdown, fitToLimit } from "../../src/reporting/fit-to-limit.ts";
import { formatDuration, mention, money, shortSha } from "../../src/reporting/format.ts";
import {
  cleanBlock,
  cleanCell,
  cleanLine,
  code,
  defuseMarkers,
  defuseMentions,
  fenced,
  listItem,
  quote,
  safeUrl,
} from "../../src/reporting/untrusted.ts";

const ZWSP = "\u200B";
const TOKEN = `ghp_${"A1b2C3d4E5".repeat(4)}`;
const none = { secrets: [] as string[] };

describe("defuseMentions", () => {
  it("breaks a mention of a person or a team in prose so GitHub does not notify them", () => {
    expect(defuseMentions("cc @ann and @org/team")).toBe(`cc @${ZWSP}ann and @${ZWSP}org/team`);
  });

  it("leaves mentions in code alone, where GitHub does not notify anyone", () => {
    expect(defuseMentions("use `@Component` here\n\n```\n@decorator\n```")).toBe("use `@Component` here\n\n```\n@decorator\n```");
  });

  it("leaves e-mail addresses alone", () => {
    expect(defuseMentions("write to ann@example.com")).toBe("write to ann@example.com");
  });

  it("breaks a mention spelled as a character reference", () => {
    expect(defuseMentions("hi &#64;ann")).toBe(`hi @${ZWSP}ann`);
  });
});

describe("defuseMarkers", () => {
  it("breaks an HTML comment that would read as one of Lisa's markers", () => {
    expect(defuseMarkers("<!-- lisa:body:end -->")).toBe(`<!-${ZWSP}- lisa:body:end -->`);
    expect(defuseMarkers("<!--LISA:pass run=1 pass=1 step=1-->")).toBe(`<!-${ZWSP}-LISA:pass run=1 pass=1 step=1-->`);
  });

  it("leaves other HTML comments alone", () => {
    expect(defuseMarkers("<!-- prettier-ignore -->")).toBe("<!-- prettier-ignore -->");
  });
});

describe("cleanLine", () => {
  it("flattens whitespace, drops HTML and cuts with an ellipsis", () => {
    expect(cleanLine("fix   the\n\nlist <b>now</b> please", { ...none, max: 200 })).toBe("fix the list now please");
    expect(cleanLine("abcdefghij", { ...none, max: 5 })).toBe("abcd…");
  });

  it("redacts a secret before cutting, so no part of it survives", () => {
    const line = cleanLine(`token ${TOKEN}`, { ...none, max: 20 });
    expect(line).not.toContain("ghp_");
    expect(line).toContain("‹redacted");
  });

  it("keeps a fence from opening a block", () => {
    expect(cleanLine("```\nrm -rf /\n```", { ...none, max: 200 })).not.toContain("\n");
  });
});

describe("cleanCell", () => {
  it("escapes pipes so a table cell cannot be split", () => {
    expect(cleanCell("a | b", { ...none, max: 50 })).toBe("a \\| b");
  });
});

describe("cleanBlock", () => {
  it("closes a fence that cutting left open", () => {
    const block = cleanBlock(`\`\`\`js\n${"x\n".repeat(100)}`, { ...none, max: 50 });
    expect(block.split("\n").at(-1)).toBe("```");
  });

  it("redacts known secret values", () => {
    expect(cleanBlock("the key is hunter2hunter2", { secrets: ["hunter2hunter2"], max: 100 })).toBe(`the key is ${REDACTED}`);
  });

  it("pushes headings below Lisa's own", () => {
    expect(cleanBlock("# Take over", { ...none, max: 100 })).toBe("##### Take over");
  });
});

describe("quote", () => {
  it("puts every line, blank ones included, inside the quotation", () => {
    expect(quote("a\n\n```\nb\n```", "   ")).toBe("   > a\n   >\n   > ```\n   > b\n   > ```");
  });
});

describe("listItem", () => {
  it("indents the lines after the first under the marker", () => {
    expect(listItem("10.", "first\n> quoted\n\nlast")).toBe("10. first\n    > quoted\n\n    last");
  });
});

describe("code", () => {
  it("uses a longer backtick run than the text holds", () => {
    expect(code("a `b` c")).toBe("``a `b` c``");
    expect(code("`edge`")).toBe("`` `edge` ``");
  });
});

describe("fenced", () => {
  it("keeps the last 40 lines, says how many were left out, and strips terminal colours", () => {
    const output = Array.from({ length: 100 }, (_, i) => `\u001b[31mline ${i + 1}\u001b[0m`).join("\n");
    const lines = fenced(output, none).split("\n");
    expect(lines[0]).toBe("```text");
    expect(lines[1]).toBe("… (60 earlier lines not shown)");
    expect(lines[2]).toBe("line 61");
    expect(lines.at(-2)).toBe("line 100");
    expect(lines.at(-1)).toBe("```");
  });

  it("uses a fence longer than any backtick run in the output, so the output cannot close it", () => {
    const lines = fenced("before\n````\nafter", none).split("\n");
    expect(lines[0]).toBe("`````text");
    expect(lines.at(-1)).toBe("`````");
  });

  it("redacts tokens and cuts very long lines", () => {
    const block = fenced(`Authorization: ${TOKEN}\n${"y".repeat(1_000)}`, none);
    expect(block).not.toContain(TOKEN);
    expect(block.split("\n")[2]).toHaveLength(240);
  });
});

describe("safeUrl", () => {
  it("accepts GitHub links with fragments and refuses anything that could break out of a link", () => {
    expect(safeUrl("https://github.com/acme/web/pull/7#discussion_r1")).toBe("https://github.com/acme/web/pull/7#discussion_r1");
    expect(safeUrl("javascript:alert(1)")).toBeUndefined();
    expect(safeUrl("https://x.test/a) [click](https://evil.test")).toBeUndefined();
    expect(safeUrl(null)).toBeUndefined();
  });
});

describe("mention", () => {
  it("mentions logins of GitHub's shape", () => {
    expect(mention("ann")).toBe("@ann");
    expect(mention("a-b-9")).toBe("@a-b-9");
  });

  it("shows anything else, bots included, as code that notifies no one", () => {
    expect(mention("lisa[bot]")).toBe("`lisa[bot]`");
    expect(mention("org/team")).toBe("`org/team`");
    expect(mention("-ann")).toBe("`-ann`");
    expect(mention("evil<b>")).toBe("`evil<b>`");
  });
});

describe("format", () => {
  it("shortens SHAs to 7 characters", () => {
    expect(shortSha("1a2b3c4d5e6f7a8b")).toBe("`1a2b3c4`");
  });

  it("formats durations and money as the tracking comment always did", () => {
    expect(formatDuration(252_000)).toBe("4m 12s");
    expect(formatDuration(3_780_000)).toBe("1h 3m");
    expect(formatDuration(9_000)).toBe("9s");
    expect(money(0.845)).toBe("$0.84");
  });
});

describe("fitToLimit", () => {
  it("joins blocks as they are when they fit", () => {
    expect(fitToLimit(["a", { text: "b", drop: 1 }, "c"], 100)).toBe("a\nb\nc");
  });

  it("leaves out droppable blocks, highest priority first, and notes it where the first one was", () => {
    const result = fitToLimit(["marker", { text: "x".repeat(60), drop: 1 }, { text: "y".repeat(60), drop: 2 }, "tail"], 130);
    expect(result).toBe(`marker\n${"x".repeat(60)}\n\n${CUT_NOTE}\n\ntail`);
  });
});

describe("cutMarkdown", () => {
  it("closes a code fence the cut left open, so the note is not swallowed", () => {
    const markdown = `intro\n\n\`\`\`\n${"line\n".repeat(100)}\`\`\`\n\nafter`;
    const cut = cutMarkdown(markdown, 200);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.endsWith(`\`\`\`\n\n${CUT_NOTE}`)).toBe(true);
  });

  it("closes a fence inside a quotation with the quotation's prefix", () => {
    const cut = cutMarkdown(`> \`\`\`\n${"> line\n".repeat(100)}> \`\`\``, 150);
    expect(cut.endsWith(`> \`\`\`\n\n${CUT_NOTE}`)).toBe(true);
  });
});
