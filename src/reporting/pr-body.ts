import { GITHUB_BODY_LIMIT, sanitizeMarkdown } from "../markdown/sanitize-markdown.ts";
import { fitBody, money } from "./format.ts";
import type { FileChange, GateLine, PrGate } from "./views.ts";

export const BODY_START = "<!-- lisa:body:start -->";
export const BODY_END = "<!-- lisa:body:end -->";

export interface PassRowView {
  pass: number;
  startedBy: string;
  guidanceExcerpt?: string;
  commits: number;
  added: number;
  deleted: number;
  gates: "green" | "red" | "none";
  costUsd: number;
  outcome:
    | "working"
    | "delivered"
    | "unchanged"
    | "blocked"
    | "skipped"
    | "dropped"
    | "failed"
    | "accepted"
    | "superseded"
    | "aborted";
}

export interface PrBodyView {
  issueRef: string;
  issueTitle: string;
  manifest?: { title: string; what: string; why?: string; key_changes?: string[]; testing?: string };
  agentSummary: string;
  files: FileChange[];
  gates: GateLine[];
  passes: PassRowView[];
  related?: {
    position: number;
    of: number;
    siblings: { position: number; repo: string; url: string | null; status?: PrGate["status"] }[];
  };
  closing: "closes" | "part_of";
  inProgress?: number;
  acceptedAfter?: number;
  secrets: string[];
}

const MAX_LISTED_FILES = 30;

/**
 * Lisa's section of a pull request body, between its markers: What / Why / Key changes / Testing
 * (the PR as it stands), the pass table, related PRs, and the issue reference. Agent text is
 * sanitized, which also strips any marker an agent writes.
 */
export function renderPrBodySection(view: PrBodyView): string {
  const clean = (text: string) => sanitizeMarkdown(text, { minHeadingDepth: 4, secrets: view.secrets, maxLength: 12_000 });
  const { manifest } = view;
  const what = clean(manifest?.what ?? (view.agentSummary.trim() || `Changes for ${view.issueRef}.`));
  const why = clean(manifest?.why ?? `Requested in ${view.issueRef}: ${view.issueTitle}`);
  const keyChanges = manifest?.key_changes?.length
    ? manifest.key_changes.map((change) => `- ${clean(change).replace(/\n+/g, " ")}`)
    : view.files.length
      ? [
          ...view.files.slice(0, MAX_LISTED_FILES).map((f) => `- \`${f.path.replace(/`/g, "'")}\` (+${f.added} −${f.deleted})`),
          ...(view.files.length > MAX_LISTED_FILES ? [`- …and ${view.files.length - MAX_LISTED_FILES} more files`] : []),
        ]
      : ["- No file changes."];
  const testing = [
    ...(manifest?.testing ? [`The agent says: ${clean(manifest.testing)}`, ""] : []),
    ...(view.gates.length
      ? view.gates.map((gate) => `- \`${gate.command.replace(/`/g, "'")}\` ${gate.passed ? "passed" : "failed"} (run by Lisa)`)
      : ["- No gate commands are configured for this repository."]),
  ];
  const table = view.passes.length
    ? [
        "| Pass | started by | commits (+/−) | gates | cost | outcome |",
        "| --- | --- | --- | --- | --- | --- |",
        ...view.passes.map(
          (p) =>
            `| ${p.pass} | ${p.startedBy.replace(/\|/g, "/")} | ${p.commits} (+${p.added} −${p.deleted}) | ${p.gates} | ${money(p.costUsd)} | ${p.outcome} |`,
        ),
      ].join("\n")
    : "";
  const related = view.related
    ? [
        `This is step ${view.related.position} of ${view.related.of} of the plan for ${view.issueRef}.`,
        "",
        ...view.related.siblings
          .filter((s) => s.position !== view.related?.position)
          .map(
            (s) =>
              `- Step ${s.position}, \`${s.repo}\`: ${s.url ?? "not opened yet"}${s.status ? ` (${s.status.replace(/_/g, " ")})` : ""}`,
          ),
      ].join("\n")
    : "";
  const parts = [
    ...(view.inProgress ? [`> 🚧 Lisa is working on pass ${view.inProgress}; this pull request may change.`] : []),
    ...(view.acceptedAfter ? [`✅ Accepted after ${view.acceptedAfter} pass${view.acceptedAfter === 1 ? "" : "es"}.`] : []),
    "### What",
    what,
    "### Why",
    why,
    "### Key changes",
    keyChanges.join("\n"),
    "### Testing",
    testing.join("\n"),
    ...(table ? ["### Passes", table] : []),
    ...(related ? ["### Related pull requests", related] : []),
    view.closing === "closes" ? `Closes ${view.issueRef}` : `Part of ${view.issueRef}`,
  ];
  const body = fitBody(parts.join("\n\n"), GITHUB_BODY_LIMIT - BODY_START.length - BODY_END.length - 2_000);
  return `${BODY_START}\n${body}\n${BODY_END}`;
}

/**
 * Puts Lisa's section into a PR body: only the text between the markers is replaced, so what
 * people wrote before or after is kept. A body without markers is Lisa's own from before markers
 * existed (or empty), and is replaced whole.
 */
export function mergePrBody(existing: string | null, section: string): string {
  const body = existing ?? "";
  const start = body.indexOf(BODY_START);
  const end = body.indexOf(BODY_END, start + BODY_START.length);
  if (start === -1 || end === -1) return section;
  const merged = `${body.slice(0, start)}${section}${body.slice(end + BODY_END.length)}`;
  return merged.length <= GITHUB_BODY_LIMIT ? merged : section;
}
