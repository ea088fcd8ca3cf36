// Terminal codes a process may print: CSI sequences (colours, cursor moves), OSC sequences (titles,
// links) up to their BEL or ST, and the other two-byte escapes.
const TERMINAL_CODES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing terminal codes is the point
  /\u001b\[[0-9;:?<=>]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]/g;

// Every control character but tab and line feed, every format character (zero-width spaces and
// joiners, soft hyphens, bidirectional controls, the BOM, tags), and the Hangul fillers that render
// as nothing.
const UNSEEN = /[\p{Cc}\p{Cf}\u115F\u1160\u3164\uFFA0]/gu;

const drop = (text: string) =>
  text
    .replace(TERMINAL_CODES, "")
    .replace(/\r\n?/g, "\n")
    .replace(UNSEEN, (c) => (c === "\n" || c === "\t" ? c : ""));

/**
 * Text as a reader of what Lisa publishes would take it: terminal codes removed whole, every other
 * control and format character dropped (a carriage return becomes a line break), and Unicode in
 * compatibility form (NFKC: full-width letters, ligatures and superscripts as plain ones). Lisa
 * redacts after this, never before: a secret cut by a character that a later step, a browser or a
 * paste removes would pass redaction cut and be joined again afterwards.
 */
export function normalizeText(text: string): string {
  // An ellipsis stays one character (it is Lisa's own mark of a cut, and hides nothing as three dots would not).
  const once = drop(text)
    .split("\u2026")
    .map((part) => part.normalize("NFKC"))
    .join("\u2026");
  // Folding can make characters the first pass would have dropped.
  return drop(once);
}
