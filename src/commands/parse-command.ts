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

/** The first `/lisa …` command in a body, or undefined when there is none. */
export function parseCommand(body: string): ParsedCommand | undefined {
  const match = COMMAND.exec(body.replace(/\r\n?/g, "\n"));
  if (!match) return undefined;
  const word = (match[1] ?? "").toLowerCase();
  const known = (COMMAND_NAMES as readonly string[]).includes(word);
  return {
    name: word === "" ? "help" : known ? (word as CommandName) : "unknown",
    word,
    text: (match[2] ?? "").trim(),
  };
}
