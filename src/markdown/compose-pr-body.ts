import type { Manifest } from "../runs/read-manifest.ts";
import { redactSecrets } from "./redact-secrets.ts";
import { GITHUB_BODY_LIMIT, sanitizeMarkdown } from "./sanitize-markdown.ts";

export interface GateOutcome {
  command: string;
  passed: boolean;
}

export interface PrBodyInput {
  issue: { number: number; title: string };
  /** How this pull request refers to the issue: `#12`, or `owner/repo#12` from another repository. */
  issueRef: string;
  /** Where this pull request stands in a multi-repository plan, with its siblings' links. */
  plan?: { position: number; steps: { position: number; repo: string; url: string | null }[] } | undefined;
  /** The agent's manifest when it wrote a valid one. */
  manifest: Manifest | undefined;
  /** The agent's final message, used for "What" when there is no manifest. */
  agentSummary: string;
  /** Files changed against the base branch, with line counts. */
  changedFiles: { path: string; added: number; deleted: number }[];
  gates: GateOutcome[];
  /** Exact secret values to redact. */
  secrets: Iterable<string>;
}

const MAX_LISTED_FILES = 30;

/**
 * Composes the pull request body with the fixed structure What / Why / Key changes / Testing
 * and a closing reference to the issue. Agent-written parts are sanitized as untrusted markdown.
 */
export function composePrBody(input: PrBodyInput): string {
  const { issue, manifest, secrets } = input;
  const clean = (text: string) => sanitizeMarkdown(text, { minHeadingDepth: 4, secrets, maxLength: 12_000 });

  const what = clean(manifest?.what ?? (input.agentSummary.trim() || `Changes for #${issue.number}.`));
  const why = clean(manifest?.why ?? `Requested in ${input.issueRef}: ${issue.title}`);
  const keyChanges = manifest?.key_changes?.length
    ? manifest.key_changes.map((change) => `- ${clean(change).replace(/\n+/g, " ")}`)
    : listChangedFiles(input.changedFiles);
  const testing = [
    ...(manifest?.testing ? [clean(manifest.testing), ""] : []),
    ...(input.gates.length
      ? input.gates.map((gate) => `- \`${gate.command}\` ${gate.passed ? "passed" : "failed"} (run by Lisa)`)
      : ["- No gate commands are configured for this repository."]),
  ];

  const body = [
    "### What",
    what,
    "### Why",
    why,
    "### Key changes",
    keyChanges.join("\n"),
    "### Testing",
    testing.join("\n"),
    ...(input.plan ? ["### Related pull requests", relatedPullRequests(input.plan, input.issueRef)] : []),
    `Closes ${input.issueRef}`,
  ].join("\n\n");
  return sanitizeMarkdown(body, { minHeadingDepth: 3, secrets, maxLength: GITHUB_BODY_LIMIT });
}

function relatedPullRequests(plan: NonNullable<PrBodyInput["plan"]>, issueRef: string): string {
  const lines = plan.steps
    .filter((step) => step.position !== plan.position)
    .map((step) => `- Step ${step.position}, \`${step.repo}\`: ${step.url ?? "not opened yet"}`);
  return [`This is step ${plan.position} of ${plan.steps.length} of the plan for ${issueRef}.`, "", ...lines].join("\n");
}

function listChangedFiles(files: PrBodyInput["changedFiles"]): string[] {
  if (files.length === 0) return ["- No file changes."];
  const lines = files.slice(0, MAX_LISTED_FILES).map((f) => `- \`${f.path}\` (+${f.added} −${f.deleted})`);
  if (files.length > MAX_LISTED_FILES) lines.push(`- …and ${files.length - MAX_LISTED_FILES} more files`);
  return lines;
}

/** The pull request title: the manifest's, else the issue's; plain text on one line. */
export function composePrTitle(issue: { title: string }, manifest: Manifest | undefined, secrets: Iterable<string>): string {
  return redactSecrets(manifest?.title ?? issue.title, secrets)
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 256);
}
