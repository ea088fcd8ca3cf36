/**
 * GitHub acts on some text it renders: `@ann` notifies a person, `#3` and `acme/web#2` add a
 * reference to another issue's timeline, `Fixes #3` closes it when the change merges, and links
 * run whatever their scheme does. Agent and stranger text that Lisa publishes must do none of it.
 * These helpers make such text inert; Lisa's own words (its `Closes` line) are written apart.
 */

/**
 * Lisa's own mark inside a reference or mention it defused: after `@` or `#` it keeps GitHub from
 * seeing a mention or a reference, while the text reads the same. Input text never keeps one
 * (stripInvisible removes them first), so every one that is published was put there by Lisa.
 */
export const DEFUSER = "\u200B";

// Format characters: zero-width spaces and joiners, bidirectional embeddings, overrides and
// isolates (which can make text read differently from what it is), the BOM, soft hyphens.
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/gu;

/** Removes invisible and bidirectional control characters, which can hide or reorder what a reviewer reads. */
export function stripInvisible(text: string): string {
  return text.replace(INVISIBLE, "");
}

// `#3`, `GH-3`, `acme/web#3`, and a closing keyword before any of them or before an issue URL.
const REFERENCE = /(?<![\w/&#])((?:[A-Za-z0-9][\w.-]*\/[\w.-]+)?#)(?=\d)|(?<![\w-])(GH-)(?=\d)/gi;
const CLOSING_KEYWORD =
  /\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?=[ \t]*:?[ \t]+(?:[\w.-]+\/[\w.-]+)?(?:#|GH-|https?:\/\/)\S)/gi;

/**
 * Makes issue references and closing keywords inert: `#3` stays `#3` to the eye but links and
 * closes nothing; `Fixes` before a reference or an issue URL is no keyword any more.
 */
export function defuseReferences(text: string): string {
  return text
    .replace(CLOSING_KEYWORD, (keyword) => `${keyword.slice(0, 1)}${DEFUSER}${keyword.slice(1)}`)
    .replace(REFERENCE, (_all, hash: string | undefined, gh: string | undefined) => `${hash ?? gh}${DEFUSER}`);
}

/** Whether GitHub would read a closing keyword before a reference or an issue URL in `text`. */
export function hasClosingKeyword(text: string): boolean {
  return new RegExp(CLOSING_KEYWORD.source, "i").test(text);
}

/** A link target that does only what a link should: http(s), or a place on the same page or site. */
export function isSafeLinkTarget(url: string): boolean {
  const target = url.trim();
  if (/^https?:\/\//i.test(target)) return true;
  // Anything else with a scheme (javascript:, data:, vbscript:, file:) is refused; so is `//host`.
  return !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("//");
}

/**
 * Agent text for a place that renders no markdown but where GitHub still acts on references (a
 * commit message, a PR title): invisible characters removed, references and closing keywords
 * defused. `oneLine` also flattens it to a single line.
 */
export function plainLiveText(text: string, { oneLine = false }: { oneLine?: boolean } = {}): string {
  const visible = stripInvisible(text);
  return defuseReferences(oneLine ? visible.replace(/\s+/g, " ").trim() : visible);
}
