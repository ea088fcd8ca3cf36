import { redactSecrets } from "../../markdown/redact-secrets.ts";
import type { AgentResult } from "../../providers/provider.ts";
import { fenced } from "../../reporting/untrusted.ts";

/** How an excerpt is introduced, by where the CLI wrote it. */
const INTRODUCED = { stderr: "Its last line on stderr", "error report": "The error it reported" } as const;

/**
 * What the issue reads when an agent session fails: Lisa's account of how it ended and, at most,
 * one line the CLI wrote (its last on stderr, or its error report's text) as a short, redacted,
 * fenced quote. Never its stdout's last words.
 */
export function sessionFailure(session: string, failure: AgentResult["failure"], secrets: readonly string[]): string {
  const said = `${session} failed (${failure?.kind ?? "agent_error"}): ${redactSecrets(failure?.message ?? "no details", secrets)}`;
  if (!failure?.excerpt) return said;
  const quote = fenced(failure.excerpt.text, { secrets, maxLines: 1, maxLineLength: 200 });
  return `${said}. ${INTRODUCED[failure.excerpt.from]}:\n\n${quote}`;
}
