import { describe, expect, it } from "vitest";
import { cachedTokens, TOKEN_REUSE_MARGIN_MS } from "../../src/github/token-cache.ts";

const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;

describe("cachedTokens", () => {
  it("reuses a token until 5 minutes before it expires, then mints another", async () => {
    let clock = T0;
    let minted = 0;
    const token = cachedTokens(
      async () => {
        minted += 1;
        return { token: `t${minted}`, expiresAt: clock + HOUR };
      },
      () => clock,
    );
    expect(await token()).toBe("t1");
    clock = T0 + HOUR - TOKEN_REUSE_MARGIN_MS - 1;
    expect(await token()).toBe("t1");
    clock = T0 + HOUR - TOKEN_REUSE_MARGIN_MS;
    expect(await token()).toBe("t2");
    expect(minted).toBe(2);
  });

  it("mints once for callers that ask together, and keeps no failed mint", async () => {
    let minted = 0;
    let fail = true;
    const token = cachedTokens(
      async () => {
        minted += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (fail) throw new Error("GitHub said 500");
        return { token: `t${minted}`, expiresAt: T0 + HOUR };
      },
      () => T0,
    );
    await expect(Promise.all([token(), token()])).rejects.toThrow("GitHub said 500");
    expect(minted).toBe(1);
    fail = false;
    expect(await Promise.all([token(), token(), token()])).toEqual(["t2", "t2", "t2"]);
    expect(minted).toBe(2);
  });
});
