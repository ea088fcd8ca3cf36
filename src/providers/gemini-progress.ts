import { geminiEvent, streamUsage, turnCounter } from "./gemini-stream.ts";
import { eventOrNothing, type ProgressEvent, type ProgressReader } from "./progress-event.ts";
import { GEMINI_PRICES, type TokenPrices } from "./token-prices.ts";

/** Tools of Gemini CLI that write a file, each naming it `file_path`. */
const FILE_TOOLS = new Set(["write_file", "replace"]);

/** The turn's words kept so far: the live check shows the last few lines of them. */
const TEXT_KEPT = 8_000;

/** What a tool call tells: the file it writes or the command it runs. */
function toolCall(name: string, parameters: Record<string, unknown>): Pick<ProgressEvent, "files" | "commands"> {
  if (FILE_TOOLS.has(name) && typeof parameters.file_path === "string") return { files: [parameters.file_path] };
  if (name === "run_shell_command" && typeof parameters.command === "string") return { commands: [parameters.command] };
  return {};
}

/**
 * A reader of one session's `gemini --output-format stream-json` lines, each printed as it happens.
 * The stream has no turn ids and sends the model's words in pieces, so the reader numbers the turns
 * and gathers each turn's words; the cost comes with the last line, the tokens priced at `prices`.
 */
export function geminiProgress({ prices = GEMINI_PRICES }: { prices?: TokenPrices } = {}): ProgressReader {
  const turnOf = turnCounter();
  let said = { turn: 0, text: "" };
  return (line) => {
    const event = geminiEvent(line);
    if (!event) return undefined;
    const turn = turnOf(event);
    const id = turn === undefined ? undefined : `turn-${turn}`;
    switch (event.type) {
      case "message": {
        if (turn === undefined) return undefined;
        said = { turn, text: `${said.turn === turn ? said.text : ""}${event.content}`.slice(-TEXT_KEPT) };
        return eventOrNothing({ turn: id, text: said.text });
      }
      case "tool_use":
        return eventOrNothing({ turn: id, ...toolCall(event.tool_name, event.parameters) });
      case "error":
        return eventOrNothing({ turn: id });
      case "result":
        return { sessionCostUsd: streamUsage(event.stats, prices).costUsd };
      default:
        return undefined;
    }
  };
}
