import { GITHUB_BODY_LIMIT } from "../markdown/sanitize-markdown.ts";
import { failedFirst } from "./describe-gate.ts";
import { type Block, CUT_NOTE, cutMarkdown, fitToLimit } from "./fit-to-limit.ts";
import { mention, money, plural } from "./format.ts";
import { cleanBlock, cleanCell, cleanLine, code, listItem, quote, safeUrl } from "./untrusted.ts";
import type { FileChange, GateLine, PrGate } from "./views.ts";

/** Lisa owns the part of a pull request body between these markers; a human's text outside them is kept. */
export const BODY_START = "<!-- lisa:body:start -->";
export const BODY_END = "<!-- lisa:body:end -->";

/** One row of the Passes table: what one pass did to this pull request. */
export interface PassRowView {
  pass: number;
  /** `label by @ann`, `redirect by @bob`. */
  startedBy: string;
  guidanceExcerpt?: string;
  commits: number;
  added: number;
  deleted: number;
  gates: "green" | "red" | "none";
  costUsd: number;
  outcome: "working" | "delivered" | "unchanged" | "blocked" | "skipped" | "accepted" | "superseded" | "aborted";
}

/** The current state of one pull request, for the Lisa-owned section of its body. */
export interface PrBodyView {
  /** `#12`, or `acme/api#12` from another repository. */
  issueRef: string;
  issueTitle: string;
  /** The agent's cumulative description, when it wrote a valid manifest. */
  manifest?: { title: string; what: string; why?: string; key_changes?: string[]; testing?: string };
  /** The agent's final message, used for "What" when there is no manifest. */
  agentSummary: string;
  /** Files changed against the base branch. */
  files: FileChange[];
  /** The gates at the current head. */
  gates: GateLine[];
  passes: PassRowView[];
  /** Where this pull request stands in a multi-repository plan. */
  related?: {
    position: number;
    of: number;
    siblings: { position: number; repo: string; url: string | null; status?: PrGate["status"] }[];
  };
  /** Only one pull request of a plan closes the issue; the others say "Part of". */
  closing: "closes" | "part_of";
  /** The pass being worked on while a non-draft pull request is open. */
  inProgress?: number;
  /** Set once the run is accepted. */
  acceptedAfter?: number;
  secrets: readonly string[];
}

const MAX_FILES = 30;
const MAX_KEY_CHANGES = 30;

const OUTCOME: Record<PassRowView["outcome"], string> = {
  working: "🔧 working",
  delivered: "delivered",
  unchanged: "unchanged",
  blocked: "⛔ blocked",
  skipped: "⏭️ skipped",
  accepted: "✅ accepted",
  superseded: "superseded",
  aborted: "⏹️ aborted",
};

const GATES: Record<PassRowView["gates"], string> = { green: "✅", red: "❌", none: "—" };

const STATUS: Record<PrGate["status"], string> = {
  approved: "✅ approved",
  pending: "⏳ waiting for review",
  changes_requested: "❌ changes requested",
  merged: "🔀 merged",
  dropped: "🚪 closed",
};

/**
 * Renders Lisa's section of a pull request body, from `BODY_START` to `BODY_END`: What / Why /
 * Key changes / Testing (the current state), the Passes table, related pull requests and the
 * reference to the issue. Agent and human text is sanitized; the result fits GitHub's limit.
 */
export function renderPrBodySection(view: PrBodyView): string {
  const { secrets } = view;
  const issueRef = /^(?:[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)?#\d+$/.test(view.issueRef)
    ? view.issueRef
    : code(view.issueRef, { secrets });
  const clean = (text: string) => cleanBlock(text, { secrets, max: 12_000, minHeadingDepth: 4 });
  const blocks: (string | Block)[] = [BODY_START];
  if (view.inProgress !== undefined) {
    blocks.push(`🚧 Pass ${view.inProgress} in progress: this description is updated when it ends.`, "");
  }
  if (view.acceptedAfter !== undefined) blocks.push(`✅ Accepted after ${plural(view.acceptedAfter, "pass", "passes")}.`, "");

  const what = view.manifest?.what.trim() || view.agentSummary.trim();
  blocks.push("### What", "", what ? { text: clean(what), drop: 1 } : `Changes for ${issueRef}.`, "");
  const why = view.manifest?.why?.trim();
  blocks.push(
    "### Why",
    "",
    why ? { text: clean(why), drop: 1 } : `Requested in ${issueRef}: ${cleanLine(view.issueTitle, { secrets, max: 256 })}`,
    "",
  );

  blocks.push("### Key changes", "");
  const keyChanges = (view.manifest?.key_changes ?? []).filter((change) => change.trim());
  if (keyChanges.length) {
    for (const change of keyChanges.slice(0, MAX_KEY_CHANGES)) {
      blocks.push({ text: listItem("-", cleanBlock(change, { secrets, max: 1_000, minHeadingDepth: 6 })), drop: 2 });
    }
    if (keyChanges.length > MAX_KEY_CHANGES) blocks.push(`- …and ${plural(keyChanges.length - MAX_KEY_CHANGES, "more change")}`);
  } else if (view.files.length === 0) {
    blocks.push("- No file changes.");
  } else {
    for (const file of view.files.slice(0, MAX_FILES)) {
      blocks.push({ text: `- ${code(file.path, { secrets })} (+${file.added} −${file.deleted})`, drop: 3 });
    }
    if (view.files.length > MAX_FILES) blocks.push(`- …and ${plural(view.files.length - MAX_FILES, "more file")}`);
  }
  blocks.push("", "### Testing", "");
  // The agent's account is quoted as its own words, apart from the gates Lisa ran itself, so a
  // line it wrote like "`npm test` passed (run by Lisa)" cannot pass for one of Lisa's.
  const testing = view.manifest?.testing?.trim();
  if (testing) blocks.push({ text: `The agent's account of its testing:\n\n${quote(clean(testing))}`, drop: 1 }, "");
  blocks.push("Gates run by Lisa:", "");
  if (view.gates.length === 0) blocks.push("- No gate commands are configured for this repository.");
  const { shown, more } = failedFirst(view.gates);
  for (const gate of shown) {
    const outcome = gate.passed ? "passed" : gate.regressed ? "failed, a regression: it passed in the previous pass" : "failed";
    blocks.push({ text: `- ${code(gate.command, { secrets })} ${outcome} (run by Lisa)`, drop: 1 });
  }
  if (more) blocks.push(`- ${more}`);

  if (view.passes.length) {
    blocks.push("", "### Passes", "");
    blocks.push("| Pass | Started by | Guidance | Commits (+/−) | Gates | Cost | Outcome |", "|---|---|---|---|---|---|---|");
    for (const row of view.passes) blocks.push({ text: passRow(row, secrets), drop: 1 });
  }

  if (view.related) blocks.push("", "### Related pull requests", "", ...relatedLines(view.related, issueRef));
  blocks.push("", `${view.closing === "closes" ? "Closes" : "Part of"} ${issueRef}`, BODY_END);
  return fitToLimit(blocks);
}

function passRow(row: PassRowView, secrets: readonly string[]): string {
  const match = /^(.*\S)\s+by\s+@?(\S+)$/.exec(row.startedBy.trim());
  const startedBy = match
    ? `${cleanCell(match[1] ?? "", { secrets, max: 40 })} by ${mention(match[2] ?? "").replace(/\|/g, "\\|")}`
    : cleanCell(row.startedBy, { secrets, max: 60 });
  const guidance = (row.guidanceExcerpt && cleanCell(row.guidanceExcerpt, { secrets, max: 80 })) || "—";
  const commits = `${row.commits} (+${row.added} −${row.deleted})`;
  return `| ${row.pass} | ${startedBy} | ${guidance} | ${commits} | ${GATES[row.gates]} | ${money(row.costUsd)} | ${OUTCOME[row.outcome]} |`;
}

function relatedLines(related: NonNullable<PrBodyView["related"]>, issueRef: string): (string | Block)[] {
  const lines: (string | Block)[] = [`This is step ${related.position} of ${related.of} of the plan for ${issueRef}.`, ""];
  for (const sibling of related.siblings.filter((s) => s.position !== related.position)) {
    const url = safeUrl(sibling.url) ?? "not opened yet";
    const status = sibling.status ? ` · ${STATUS[sibling.status]}` : "";
    lines.push({ text: `- Step ${sibling.position}, ${code(sibling.repo)}: ${url}${status}`, drop: 1 });
  }
  return lines;
}

/**
 * Puts Lisa's section into a pull request body, keeping whatever a human wrote outside it:
 *
 * - no body yet (null or blank): the section alone;
 * - both markers: the text from the start marker through the first end marker after it is
 *   replaced (when a human's text repeats a start marker before it, the one nearest the end marker
 *   counts), and everything before and after is kept byte for byte;
 * - only the start marker (a human deleted the end one): text before it is kept, the rest was
 *   Lisa's and is replaced;
 * - only the end marker: text up to it is replaced, text after it is kept;
 * - no markers: the body is one Lisa wrote before it used markers (Lisa opens every pull request
 *   it works on), and the section replaces it whole.
 *
 * The result fits GitHub's 65,536-character limit: Lisa's section is cut first, with a note,
 * keeping its last paragraph (the reference to the issue); a human's text is cut only when it
 * alone leaves no room for the markers.
 */
export function mergePrBody(existing: string | null, section: string): string {
  const own = section.startsWith(BODY_START) && section.endsWith(BODY_END) ? section : `${BODY_START}\n${section}\n${BODY_END}`;
  if (!existing?.trim()) return joinWithinLimit("", own, "");
  const { before, after } = splitAroundSection(existing);
  return joinWithinLimit(before, own, after);
}

/** The text outside Lisa's section of a body (see `mergePrBody`). */
function splitAroundSection(body: string): { before: string; after: string } {
  let end = body.indexOf(BODY_END);
  while (end !== -1) {
    const start = body.lastIndexOf(BODY_START, end);
    if (start !== -1) return { before: body.slice(0, start), after: body.slice(end + BODY_END.length) };
    end = body.indexOf(BODY_END, end + BODY_END.length);
  }
  const start = body.indexOf(BODY_START);
  if (start !== -1) return { before: body.slice(0, start), after: "" };
  const lone = body.lastIndexOf(BODY_END);
  if (lone !== -1) return { before: "", after: body.slice(lone + BODY_END.length) };
  return { before: "", after: "" };
}

function joinWithinLimit(before: string, section: string, after: string): string {
  const limit = GITHUB_BODY_LIMIT;
  if (before.length + section.length + after.length <= limit) return `${before}${section}${after}`;
  const frame = BODY_START.length + BODY_END.length + 2;
  const inner = section.slice(BODY_START.length, -BODY_END.length).replace(/^\n/, "").replace(/\n$/, "");
  const room = limit - before.length - after.length - frame;
  if (room >= CUT_NOTE.length + 500) {
    // The last paragraph is the reference to the issue ("Closes #12"); it must survive the cut.
    const last = inner.lastIndexOf("\n\n");
    const tail = last !== -1 && inner.length - last <= 300 ? inner.slice(last) : "";
    const head = cutMarkdown(inner.slice(0, inner.length - tail.length), room - tail.length);
    return `${before}${BODY_START}\n${head}${tail}\n${BODY_END}${after}`;
  }
  // Only a body a human filled almost to GitHub's limit gets here: keep the markers and a note.
  const minimal = `${BODY_START}\n${CUT_NOTE}\n${BODY_END}`;
  const human = limit - minimal.length;
  const keptAfter = cutMarkdown(after, human - Math.min(before.length, Math.floor(human / 2)));
  const head = cutMarkdown(before, human - keptAfter.length);
  return `${head}${minimal}${keptAfter}`;
}
