import { describe, expect, it } from "vitest";
import { consolidate, parseMemory, renderMemory } from "../../../src/publication/memory-file.ts";

describe("the memory file", () => {
  it("stays under its cap after many accepted runs, keeping the newest learnings", () => {
    // Learnings that share no word, so none replaces another: only the cap keeps the file short.
    const word = (n: number) => `w${n.toString(36).padStart(4, "0")}`;
    let file = "";
    for (let run = 1; run <= 100; run++) {
      const learned = [1, 2].map((k) => `${word(run * 10 + k)} ${word(run * 10 + k + 5_000)} (@ann, #${run})`);
      file = renderMemory(consolidate(parseMemory(file), learned, 40));
    }
    const lines = parseMemory(file);
    expect(lines).toHaveLength(40);
    expect(lines.at(-1)).toBe(`${word(1002)} ${word(6002)} (@ann, #100)`);
    expect(lines[0]).toBe(`${word(811)} ${word(5811)} (@ann, #81)`);
  });

  it("merges a duplicate and lets a later line on the same subject replace an earlier one", () => {
    const lines = consolidate(
      ["Use our logger, not console.log (@ann, #1)", "Name tests after behaviour (@bob, #2)"],
      ["use our logger not console.log! (@bob, #3)", "Name tests after the behaviour they check (@ann, #4)"],
      40,
    );
    expect(lines).toEqual(["use our logger not console.log! (@bob, #3)", "Name tests after the behaviour they check (@ann, #4)"]);
  });

  it("cuts a long learning to one line", () => {
    const [line] = consolidate([], [`a\nb ${"x".repeat(500)}`], 40);
    expect(line?.length).toBe(200);
    expect(line).not.toContain("\n");
  });
});
