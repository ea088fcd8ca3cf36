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
