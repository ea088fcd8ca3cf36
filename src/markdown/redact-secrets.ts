import { findSecrets } from "../security/find-secrets.ts";
import { normalizeText } from "./normalize-text.ts";

// No markdown metacharacters, so the marker survives markdown printing unescaped.
export const REDACTED = "‹redacted›";

/**
 * The one way every word Lisa writes is made safe to publish, before it is fenced or escaped for
 * its place: normalized first (normalizeText: terminal codes, control and format characters gone,
 * Unicode folded), then every value in `known` (the installation tokens, model keys, the App's key
 * and secrets: heldSecrets) and every secret shape replaced by `‹redacted›`, as they are, cut across
 * lines, reversed, or in base64, hex or URL encoding (findSecrets).
 */
export function redactSecrets(text: string, known: Iterable<string> = []): string {
  const normal = normalizeText(text);
  const spans = findSecrets(normal, known).sort((a, b) => a.start - b.start);
  // Overlapping finds (a key, and its line inside it) become one redaction.
  const merged: [number, number][] = [];
  for (const { start, end } of spans) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  let result = "";
  let at = 0;
  for (const [start, end] of merged) {
    result += `${normal.slice(at, start)}${REDACTED}`;
    at = end;
  }
  return result + normal.slice(at);
}
