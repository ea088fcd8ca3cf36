import { describe, expect, it } from "vitest";
import { LONG_FILE_LINES, sourceRuleProblems } from "../../dev/source-rules.ts";

// `npm run lint` holds src/ to these rules (scripts/check-source-rules.ts, issue 39).

const lines = (count: number, head = "") => `${head}${"export const x = 1;\n".repeat(count - (head ? 1 : 0))}`;
const check = (text: string, exists = (_: string) => true) => sourceRuleProblems([{ path: "src/a.ts", text }], exists);

describe("the source rules", () => {
  it("refuse a file over 250 lines that does not say why, and take one that does", () => {
    expect(check(lines(LONG_FILE_LINES))).toEqual([]);
    expect(check(lines(LONG_FILE_LINES + 1))).toEqual([
      expect.stringContaining("src/a.ts: 251 lines, over 250 without a reason"),
    ]);
    expect(check(lines(LONG_FILE_LINES + 1, "// Over 250 lines: one state machine that reads best whole.\n"))).toEqual([]);
    // A reason must say something.
    expect(check(lines(LONG_FILE_LINES + 1, "// Over 250 lines: yes.\n"))).toHaveLength(1);
  });

  it("refuse a comment that cites a rule, a section or an issue the repository does not ship", () => {
    for (const citation of ["(rule 24)", "Rule 9c:", "(design §5.3)", "(issue 26)", "(seed 001's report)"])
      expect(check(`/** Stops the run ${citation}. */\nexport const a = 1;\n`)).toEqual([
        expect.stringMatching(/^src\/a\.ts:1: the comment cites "/),
      ]);
    expect(check("export const a = 1; // stops the run (rules 18, 19)\n")).toHaveLength(1);
  });

  it("take a comment that names a document under docs/, and refuse one naming a document that is not there", () => {
    const text = "// The steering table (docs/operations.md) says so.\nexport const a = 1;\n";
    expect(check(text)).toEqual([]);
    expect(check(text, () => false)).toEqual(["src/a.ts:1: the comment names docs/operations.md, which does not exist"]);
  });

  it("read only comments: the same words in code or a string are not citations", () => {
    expect(check('export const url = "https://example.com/rule 24";\nexport const rule = "issue 26 §";\n')).toEqual([]);
  });
});
