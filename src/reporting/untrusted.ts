import type { Root } from "mdast";
import remarkParse from "remark-parse";
import { unified } from "unified";
import { visit } from "unist-util-visit";
import { DEFUSER, defuseReferences, stripInvisible } from "../markdown/live-text.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { sanitizeMarkdown } from "../markdown/sanitize-markdown.ts";

// Text written by a human or an agent. Every helper here starts with redactSecrets (normalize, then
// redact), then escapes or fences: it keeps HTML out, never lets the text reach past its own block,
// and never lets it forge one of Lisa's hidden markers.

const ZERO_WIDTH_SPACE = DEFUSER;
// sanitizeMarkdown cuts its result at this length; the callers here cut the input first instead,
// so a fence is never left open by a cut.
const NO_CUT = Number.MAX_SAFE_INTEGER;

export interface CleanOptions {
  /** Exact secret values to redact. */
  secrets: Iterable<string>;
  /** Longest input kept, in characters, before markdown is printed. */
  max: number;
}

/**
 * Breaks an HTML comment that starts a Lisa marker (`<!-- lisa:…`), which sanitizing leaves in
 * code spans, code blocks and escaped text, so that only Lisa's own markers are found again.
 */
export function defuseMarkers(text: string): string {
  return text.replace(/<!--(?=\s*lisa)/gi, `<!-${ZERO_WIDTH_SPACE}-`);
}

// Mentions and character references that GitHub would turn into a mention (`@ann`, `@org/team`).
const MENTION = /(^|[^A-Za-z0-9_])(@|&#0*64;|&#x0*40;|&commat;)(?=[A-Za-z0-9])/gi;

/**
 * Keeps quoted text from acting on GitHub (see live-text.ts): in prose, not in code, an `@` gets a
 * zero-width space after it, so it reads the same but notifies no one; issue references and
 * closing keywords are defused the same way. Invisible characters are removed first, so every
 * zero-width space published is one of Lisa's.
 */
export function defuseMentions(markdown: string): string {
  const text = stripInvisible(markdown);
  const tree = unified().use(remarkParse).parse(text) as Root;
  const spans: { start: number; end: number }[] = [];
  visit(tree, "text", (node) => {
    const start = node.position?.start.offset;
    const end = node.position?.end.offset;
    if (start !== undefined && end !== undefined) spans.push({ start, end });
  });
  let result = text;
  for (const { start, end } of spans.sort((a, b) => b.start - a.start)) {
    const prose = result.slice(start, end).replace(MENTION, (_all, before: string) => `${before}@${DEFUSER}`);
    result = `${result.slice(0, start)}${defuseReferences(prose)}${result.slice(end)}`;
  }
  return result;
}

/** Cuts to at most `max` characters with an ellipsis. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

// Huge inputs are shortened before redacting, keeping enough beyond `max` that a secret which
// starts before the final cut (a private key is a few thousand characters) is still whole.
const preCut = (text: string, max: number) => (text.length > max + 8_192 ? text.slice(0, max + 8_192) : text);

const flatten = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * Untrusted text for one line: whitespace flattened, cut, sanitized and flattened again. Place it
 * after some text of Lisa's on the line, never at its start, so it cannot open a block.
 */
export function cleanLine(text: string, { secrets, max }: CleanOptions): string {
  const short = cut(flatten(redactSecrets(preCut(text, max), secrets)), max);
  const clean = flatten(sanitizeMarkdown(short, { secrets, minHeadingDepth: 6, maxLength: NO_CUT }));
  return defuseMarkers(defuseMentions(clean));
}

/** `before` followed by the clean line, or nothing when the text is empty once cleaned. */
export function cleanAfter(before: string, text: string | undefined, options: CleanOptions): string {
  const clean = text ? cleanLine(text, options) : "";
  return clean ? `${before}${clean}` : "";
}

/** `cleanLine` for a table cell, where a pipe would end the cell. */
export function cleanCell(text: string, options: CleanOptions): string {
  return cleanLine(text, options).replace(/\|/g, "\\|");
}

/**
 * Untrusted markdown as a self-contained block: cut first (so no fence is left open), sanitized
 * (no HTML, no images, headings no shallower than `minHeadingDepth`), mentions and markers defused.
 */
export function cleanBlock(text: string, options: CleanOptions & { minHeadingDepth?: 4 | 5 | 6 }): string {
  const { secrets, max, minHeadingDepth = 5 } = options;
  const short = cut(redactSecrets(preCut(text, max), secrets).trim(), max);
  const clean = sanitizeMarkdown(short, { secrets, minHeadingDepth, maxLength: NO_CUT });
  return defuseMarkers(defuseMentions(clean));
}

/** Prefixes every line of a clean block with `indent` and `> `, so the whole block is a quotation. */
export function quote(block: string, indent = ""): string {
  if (!block) return "";
  return block
    .split("\n")
    .map((line) => (line ? `${indent}> ${line}` : `${indent}>`))
    .join("\n");
}

/** A list item whose content is a clean block: the first line after `marker`, the rest indented under it. */
export function listItem(marker: string, block: string): string {
  const indent = " ".repeat(marker.length + 1);
  return block
    .split("\n")
    .map((line, i) => (i === 0 ? `${marker} ${line}` : line ? `${indent}${line}` : ""))
    .join("\n");
}

/** A code span around one line of text, with a backtick run longer than any inside it. */
export function code(text: string, { secrets = [], max = 200 }: Partial<CleanOptions> = {}): string {
  const flat = defuseMarkers(cut(flatten(redactSecrets(preCut(text, max), secrets)), max)) || " ";
  const longest = Math.max(0, ...[...flat.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") ? " " : "";
  return `${ticks}${pad}${flat}${pad}${ticks}`;
}

/**
 * Command output as a fenced code block: terminal codes and control characters removed, redacted
 * (both by redactSecrets, in that order, so nothing removed later can join a secret), the last `maxLines`
 * lines each cut to `maxLineLength`, inside a fence longer than any backtick run in it.
 */
export function fenced(
  output: string,
  { secrets, maxLines = 40, maxLineLength = 240 }: { secrets: Iterable<string>; maxLines?: number; maxLineLength?: number },
): string {
  const text = output.trimEnd();
  // Only the tail can be shown; redacting it alone keeps huge outputs cheap.
  const tailLength = maxLines * (maxLineLength + 2) + 8_192;
  const tail = text.length > tailLength ? text.slice(-tailLength) : text;
  const lines = redactSecrets(tail, secrets).split("\n");
  if (tail !== text) lines.shift(); // a line cut at its start
  const total = tail === text ? lines.length : text.split("\n").length;
  const shown = lines.slice(-maxLines).map((line) => defuseMarkers(cut(line, maxLineLength)));
  if (total > shown.length) shown.unshift(`… (${total - shown.length} earlier lines not shown)`);
  const longest = Math.max(0, ...shown.flatMap((line) => [...line.matchAll(/`+/g)].map((m) => m[0].length)));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}text`, ...shown, fence].join("\n");
}

/** A link target Lisa can print as is: http(s), no spaces, quotes, brackets or angle brackets. */
export function safeUrl(url: string | null | undefined): string | undefined {
  return url && /^https?:\/\/[^\s<>()[\]`"'\\]+$/.test(url) && url.length <= 2_000 ? url : undefined;
}

/** `[text](url)` when the URL is safe, else nothing; `text` is Lisa's own. */
export function link(text: string, url: string | null | undefined): string {
  const safe = safeUrl(url);
  return safe ? `[${text}](${safe})` : "";
}
