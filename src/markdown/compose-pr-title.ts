import { plainLiveText } from "./live-text.ts";
import { redactSecrets } from "./redact-secrets.ts";

/**
 * The pull request title: the manifest's, else the issue's; plain text on one line. It is also
 * the subject of Lisa's commit, where GitHub acts on closing keywords: they are defused.
 */
export function composePrTitle(
  issue: { title: string },
  manifest: { title: string } | undefined,
  secrets: Iterable<string>,
): string {
  return plainLiveText(redactSecrets(manifest?.title ?? issue.title, secrets), { oneLine: true }).slice(0, 256);
}
