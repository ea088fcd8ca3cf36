/** A token is used until this long before it expires: a git operation that starts may run for minutes. */
export const TOKEN_REUSE_MARGIN_MS = 5 * 60_000;

/** An installation token and when GitHub says it expires. */
export interface ExpiringToken {
  token: string;
  expiresAt: number;
}

/**
 * Mints installation tokens through `mint`, and hands out the one held until 5 minutes before it
 * expires, held in memory only (never written to disk). Concurrent callers share one mint.
 */
export function cachedTokens(mint: () => Promise<ExpiringToken>, now: () => number): () => Promise<string> {
  let held: ExpiringToken | undefined;
  let minting: Promise<ExpiringToken> | undefined;
  return async () => {
    if (held && held.expiresAt - now() > TOKEN_REUSE_MARGIN_MS) return held.token;
    // The first caller to find it stale mints; the others wait for that token. A failed mint is not kept.
    minting ??= mint()
      .then((token) => {
        held = token;
        return token;
      })
      .finally(() => {
        minting = undefined;
      });
    return (await minting).token;
  };
}
