import type { Heading, List, ListItem, Paragraph, Root, RootContent } from "mdast";
import remarkParse from "remark-parse";
import remarkStringify from "remark-stringify";
import { unified } from "unified";
import { SKIP, visit } from "unist-util-visit";
import { isSafeLinkTarget } from "./live-text.ts";
import { redactSecrets } from "./redact-secrets.ts";

/** GitHub rejects issue and pull request bodies longer than this many characters. */
export const GITHUB_BODY_LIMIT = 65_536;

export interface SanitizeOptions {
  /** Shallowest heading level allowed; deeper structure is kept, shallower is pushed down. */
  minHeadingDepth?: 1 | 2 | 3 | 4 | 5 | 6;
  /** Exact secret values to redact besides the known token shapes. */
  secrets?: Iterable<string>;
  /** Maximum length of the result. */
  maxLength?: number;
}

// A single unbroken paragraph longer than this reads better as points.
const WALL_OF_TEXT = 280;

/** Splits one long paragraph of prose into a bullet list of its sentences. */
function splitWallOfText(paragraph: Paragraph): RootContent {
  const only = paragraph.children.length === 1 ? paragraph.children[0] : undefined;
  if (only?.type !== "text" || only.value.length < WALL_OF_TEXT || only.value.includes("\n")) return paragraph;
  const sentences = only.value.split(/(?<=[.!?])\s+(?=[A-Z0-9`"'(])/).filter((s) => s.trim());
  if (sentences.length < 3) return paragraph;
  const items: ListItem[] = sentences.map((sentence) => ({
    type: "listItem",
    spread: false,
    children: [{ type: "paragraph", children: [{ type: "text", value: sentence.trim() }] }],
  }));
  return { type: "list", ordered: false, spread: false, children: items } satisfies List;
}

function transform(tree: Root, minDepth: number): void {
  visit(tree, (node, index, parent) => {
    if ((node.type === "html" || node.type === "image" || node.type === "imageReference") && parent && index !== undefined) {
      // Raw HTML can hide content or break the page; images can beacon to third parties.
      parent.children.splice(index, 1);
      return [SKIP, index];
    }
    if (node.type === "definition" && !isSafeLinkTarget(node.url) && parent && index !== undefined) {
      parent.children.splice(index, 1);
      return [SKIP, index];
    }
    if (node.type === "link" && !isSafeLinkTarget(node.url) && parent && index !== undefined) {
      // A `javascript:` or `data:` link keeps its words and loses its target.
      parent.children.splice(index, 1, ...node.children);
      return index;
    }
    if (node.type === "heading") {
      const heading = node as Heading;
      heading.depth = Math.min(6, Math.max(minDepth, heading.depth)) as Heading["depth"];
    }
    if (node.type === "paragraph" && parent?.type === "root" && index !== undefined) {
      parent.children[index] = splitWallOfText(node as Paragraph) as Root["children"][number];
    }
    return undefined;
  });
  // Removing inline nodes can leave a paragraph empty or ending in a line break.
  visit(tree, "paragraph", (paragraph, index, parent) => {
    const last = paragraph.children.at(-1);
    if (last?.type === "text") last.value = last.value.trimEnd();
    if (last?.type === "text" && last.value === "") paragraph.children.pop();
    if (paragraph.children.length === 0 && parent && index !== undefined) {
      parent.children.splice(index, 1);
      return [SKIP, index];
    }
    return undefined;
  });
}

function truncate(markdown: string, maxLength: number): string {
  if (markdown.length <= maxLength) return markdown;
  const note = "\n\n_…truncated to fit GitHub's length limit._\n";
  const cut = markdown.slice(0, maxLength - note.length);
  // Cut at a line boundary so no markup is left half open.
  return `${cut.slice(0, Math.max(cut.lastIndexOf("\n"), 0))}${note}`;
}

/**
 * Cleans agent-written markdown for a GitHub body: normalizes and redacts it first (redactSecrets),
 * parses it to a syntax tree, drops raw HTML, images and links whose scheme is not http(s), bounds
 * heading levels, turns a wall of text into points, prints it with `-` bullets, redacts again (a
 * markdown escape or character reference can hide a secret until it is printed), and fits it into
 * GitHub's length limit.
 */
export function sanitizeMarkdown(markdown: string, options: SanitizeOptions = {}): string {
  const { minHeadingDepth = 3, secrets = [], maxLength = GITHUB_BODY_LIMIT } = options;
  const processor = unified()
    .use(remarkParse)
    .use(() => (tree: Root) => transform(tree, minHeadingDepth))
    .use(remarkStringify, { bullet: "-", emphasis: "_", strong: "*", fence: "`", rule: "-", listItemIndent: "one" });
  const printed = String(processor.processSync(redactSecrets(markdown, secrets).trim())).trim();
  return truncate(redactSecrets(printed, secrets), maxLength);
}
