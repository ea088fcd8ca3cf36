// The rules the build keeps for Lisa's own source files (`npm run lint` runs them through
// scripts/check-source-rules.ts): a file over LONG_FILE_LINES lines says why in its first lines, and
// a comment cites only what the repository ships (a file under docs/), never a rule number, a
// section sign or an issue number from documents a reader of the code cannot open.

/** Past this many lines, a source file says in its header why it is one file. */
export const LONG_FILE_LINES = 250;

/** The header line a long file carries: `// Over 250 lines: <why it stays one file>`. */
const LONG_FILE_REASON = /^\/\/ Over 250 lines: .{20,}/m;

/** Citations of documents the repository does not ship. */
const FOREIGN_CITATION = /\b(?:rules? \d+[a-z]?|issue \d+|seed \d+)\b|§/i;

/** A documentation file a comment names. */
const DOC_PATH = /\bdocs\/[\w./-]+\.md\b/g;

/** The comments of a TypeScript file, each with the line it starts on (strings are not parsed: a `//` in one is rare here). */
function comments(text: string): { line: number; text: string }[] {
  const found: { line: number; text: string }[] = [];
  const pattern = /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;
  for (const match of text.matchAll(pattern)) {
    // A `//` inside a URL or a string is not a comment.
    const before = text.slice(text.lastIndexOf("\n", match.index) + 1, match.index);
    if (match[0].startsWith("//") && /["'`:]/.test(before.slice(-1))) continue;
    if ((before.match(/["'`]/g)?.length ?? 0) % 2 === 1) continue;
    found.push({ line: text.slice(0, match.index).split("\n").length, text: match[0] });
  }
  return found;
}

/** What breaks the rules in `files` (paths relative to the repository), one line each; `exists` says whether a repository path exists. */
export function sourceRuleProblems(files: { path: string; text: string }[], exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const lines = file.text.split("\n").length - (file.text.endsWith("\n") ? 1 : 0);
    const head = file.text.split("\n").slice(0, 5).join("\n");
    if (lines > LONG_FILE_LINES && !LONG_FILE_REASON.test(head))
      problems.push(
        `${file.path}: ${lines} lines, over ${LONG_FILE_LINES} without a reason: split it, or say why in a header line "// Over 250 lines: …"`,
      );
    for (const comment of comments(file.text)) {
      const citation = comment.text.match(FOREIGN_CITATION);
      if (citation)
        problems.push(
          `${file.path}:${comment.line}: the comment cites "${citation[0]}" from a document the repository does not ship; say the reason, or name a file under docs/`,
        );
      for (const [doc] of comment.text.matchAll(DOC_PATH))
        if (!exists(doc)) problems.push(`${file.path}:${comment.line}: the comment names ${doc}, which does not exist`);
    }
  }
  return problems;
}
