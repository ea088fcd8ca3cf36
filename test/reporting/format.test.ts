import { describe, expect, it } from "vitest";
import { money } from "../../src/reporting/format.ts";

describe("money", () => {
  it("shows dollars and cents", () => {
    expect(money(0)).toBe("$0.00");
    expect(money(0.84)).toBe("$0.84");
    expect(money(20)).toBe("$20.00");
  });

  it("shows a session that cost under a cent as such, not as $0.00 beside its pass's $0.01", () => {
    // Three demo sessions of $0.004 each: the pass shows their sum, each session what it cost.
    const sessions = [0.004, 0.004, 0.004];
    expect(money(sessions.reduce((a, b) => a + b))).toBe("$0.01");
    for (const cost of sessions) expect(money(cost)).toBe("<$0.01");
    expect(money(0.006)).toBe("$0.01");
  });
});
