import { redactSecrets } from "./redact-secrets.ts";

/** The pull request title: the manifest's, else the issue's; plain text on one line. */
export function composePrTitle(
  issue: { title: string },
  manifest: { title: string } | undefined,
  secrets: Iterable<string>,
): string {
  return redactSecrets(manifest?.title ?? issue.title, secrets)
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 256);
}
