// No markdown metacharacters, so the marker survives markdown printing unescaped.
export const REDACTED = "‹redacted›";

/**
 * Secret shapes Lisa must never echo, each with what it is, for a refusal that names the kind
 * without the value. GitHub tokens cover every prefix (ghp, gho, ghu, ghs, ghr) including the long
 * stateless installation-token format (`ghs_<appid>_<jwt>`, ~520 characters with dots),
 * fine-grained PATs, and the model vendors' API keys.
 */
export const SECRET_SHAPES: readonly { kind: string; pattern: RegExp }[] = [
  { kind: "a GitHub token", pattern: /\bgh[pousr]_[A-Za-z0-9_.-]{30,}/g },
  { kind: "a GitHub fine-grained token", pattern: /\bgithub_pat_[A-Za-z0-9_]{22,}/g },
  { kind: "an Anthropic API key", pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "an OpenAI API key", pattern: /\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}/g },
  { kind: "a Google API key", pattern: /\bAIza[0-9A-Za-z_-]{35}/g },
  { kind: "a private key", pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g },
  { kind: "a credential in a header", pattern: /\b(?:x-access-token|Bearer|token):\s*[A-Za-z0-9_.-]{20,}/gi },
];

/** The kinds of secret shapes in `text`, each once, in the order of SECRET_SHAPES. */
export function secretKindsIn(text: string): string[] {
  return SECRET_SHAPES.filter(({ pattern }) => new RegExp(pattern.source, pattern.flags.replace("g", "")).test(text)).map(
    ({ kind }) => kind,
  );
}

/**
 * Replaces every secret-looking string, and every exact value in `known`
 * (the live installation token, configured API keys), with `‹redacted›`.
 */
export function redactSecrets(text: string, known: Iterable<string> = []): string {
  let result = text;
  // Longest first, so a whole key goes before any of its lines.
  for (const value of [...known].sort((a, b) => b.length - a.length)) {
    // Short values would redact ordinary words; real secrets are long.
    if (value.length >= 8) result = result.split(value).join(REDACTED);
  }
  for (const { pattern } of SECRET_SHAPES) result = result.replace(pattern, REDACTED);
  return result;
}
