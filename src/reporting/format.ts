import { GITHUB_BODY_LIMIT, sanitizeMarkdown } from "../markdown/sanitize-markdown.ts";
import type { PrGate } from "./views.ts";

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h ? `${h}h ${m}m` : m ? `${m}m ${s}s` : `${s}s`;
}

export const money = (usd: number) => `$${usd.toFixed(2)}`;
export const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 7) : "?");

/** `@login` only for names shaped like GitHub logins, so no text can pose as a mention of something else. */
export const mention = (login: string) => (/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(login) ? `@${login}` : "someone");

/** Untrusted text on one line: sanitized, flattened and cut. */
export function oneLine(text: string, secrets: readonly string[], max = 200): string {
  const flat = sanitizeMarkdown(text, { secrets, minHeadingDepth: 6 })
    .replace(/<!--|-->/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Untrusted text as a quote block: sanitized (no HTML, so no forged markers), each line quoted. */
export function quote(text: string, secrets: readonly string[], max = 1_500): string {
  const clean = sanitizeMarkdown(text, { secrets, minHeadingDepth: 6, maxLength: max }).replace(/<!--|-->/g, "");
  return clean
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
}

const GATE_ICON: Record<PrGate["status"], string> = {
  approved: "✅",
  pending: "⏳",
  changes_requested: "❌",
  merged: "🔀",
  dropped: "🚫",
};

/** `acme/api#5 ✅ @ann at 1a2b3c4`, `acme/web#7 ❌ changes requested by @bob`. */
export function gateLine(gate: PrGate): string {
  const name = `${gate.repo}#${gate.number}`;
  switch (gate.status) {
    case "approved":
      return `${name} ${GATE_ICON.approved} ${gate.approvers.map(mention).join(", ")} at \`${short(gate.headSha)}\``;
    case "changes_requested":
      return `${name} ${GATE_ICON.changes_requested} changes requested by ${gate.blockers.map(mention).join(", ")}`;
    case "merged":
      return `${name} ${GATE_ICON.merged} merged`;
    case "dropped":
      return `${name} ${GATE_ICON.dropped} closed`;
    default:
      return `${name} ${GATE_ICON.pending} waiting for review`;
  }
}

/** Cuts a whole body to GitHub's limit at a line boundary, with a visible note. */
export function fitBody(text: string, limit = GITHUB_BODY_LIMIT): string {
  if (text.length <= limit) return text;
  const note = "\n\n_…cut to fit GitHub's length limit._";
  const cut = text.slice(0, limit - note.length);
  return `${cut.slice(0, Math.max(cut.lastIndexOf("\n"), 0))}${note}`;
}
