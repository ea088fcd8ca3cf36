/** Commands Lisa knows, each at the start of a line of a comment, review or inline comment. */
export const COMMAND_NAMES = [
  "redirect",
  "continue",
  "accept",
  "fix",
  "skip",
  "abort",
  "retry",
  "proceed",
  "status",
  "help",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export interface ParsedCommand {
  /** A known command, `help` for a bare `/lisa`, or `unknown`. */
  name: CommandName | "unknown";
  /** The word after `/lisa` as written, for the reply to an unknown command. */
  word: string;
  /** Everything after the command word: the guidance of `redirect`, the notes of `fix`. May span lines. */
  text: string;
}

// `/lisa` then a word, at the start of any line; `/lisafoo` is no command, and `/lisa retry2` is no retry.
const COMMAND = /^\/lisa(?=[ \t]|$)[ \t]*([\w-]*)[ \t]*([\s\S]*)$/im;

// A fence of three or more backticks or tildes, indented by at most three spaces, as CommonMark has it.
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The body with the contents of fenced code blocks blanked, at the same offsets: a `/lisa retry`
 * quoted in a code block (an example, a pasted log) is text, not a command. An unclosed fence runs
 * to the end, as on GitHub.
 */
function outsideCode(body: string): string {
  let fence: string | undefined;
  return body
    .split("\n")
    .map((line) => {
      const opening = FENCE.exec(line)?.[1];
      if (fence === undefined) {
        if (opening) fence = opening;
        return line;
      }
      if (opening && opening[0] === fence[0] && opening.length >= fence.length && line.trim() === opening) fence = undefined;
      return " ".repeat(line.length);
    })
    .join("\n");
}

/** The first `/lisa …` command in a body outside code blocks, or undefined when there is none. */
export function parseCommand(body: string): ParsedCommand | undefined {
  const text = body.replace(/\r\n?/g, "\n");
  const match = COMMAND.exec(outsideCode(text));
  if (!match) return undefined;
  // What follows the command word is taken from the body as written: a redirect may quote code.
  const rest = text.slice(match.index + match[0].length - (match[2] ?? "").length);
  const word = (match[1] ?? "").toLowerCase();
  const known = (COMMAND_NAMES as readonly string[]).includes(word);
  return {
    name: word === "" ? "help" : known ? (word as CommandName) : "unknown",
    word,
    text: rest.trim(),
  };
}
