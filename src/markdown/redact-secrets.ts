// No markdown metacharacters, so the marker survives markdown printing unescaped.
export const REDACTED = "‹redacted›";

/**
 * Secret shapes Lisa must never echo. GitHub tokens cover every prefix (ghp, gho, ghu, ghs, ghr)
 * including the long stateless installation-token format (`ghs_<appid>_<jwt>`, ~520 characters
 * with dots), fine-grained PATs, and the model vendors' API keys.
 */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bgh[pousr]_[A-Za-z0-9_.-]{30,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g,
  /\bsk-ant-[A-Za-z0-9_-]{20,}/g,
  /\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\b(?:x-access-token|Bearer|token):\s*[A-Za-z0-9_.-]{20,}/gi,
];

/**
 * Replaces every secret-looking string, and every exact value in `known`
 * (the live installation token, configured API keys), with `‹redacted›`.
 */
export function redactSecrets(text: string, known: Iterable<string> = []): string {
  let result = text;
  for (const value of known) {
    // Short values would redact ordinary words; real secrets are long.
    if (value.length >= 8) result = result.split(value).join(REDACTED);
  }
  for (const pattern of SECRET_PATTERNS) result = result.replace(pattern, REDACTED);
  return result;
}
