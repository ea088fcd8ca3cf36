import { redactSecrets } from "../markdown/redact-secrets.ts";
import type { AgentResult } from "../providers/provider.ts";
import { fenced } from "../reporting/untrusted.ts";

/**
 * What the issue reads when an agent session fails: Lisa's account of how it ended and, at most,
 * the CLI's last line on stderr as a short, redacted, fenced quote. Never anything from stdout.
 */
export function sessionFailure(session: string, failure: AgentResult["failure"], secrets: readonly string[]): string {
  const said = `${session} failed (${failure?.kind ?? "agent_error"}): ${redactSecrets(failure?.message ?? "no details", secrets)}`;
  if (!failure?.excerpt) return said;
  return `${said}. Its last line on stderr:\n\n${fenced(failure.excerpt, { secrets, maxLines: 1, maxLineLength: 200 })}`;
}
