import readline from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { Steering } from "./provider.ts";

/** Guidance written for a running session, looked for every `everyMs` while it runs. */
export interface GuidanceFeed {
  /** Guidance not given to the session yet, one message text each; `given` marks one as received. */
  waiting(): Promise<{ text: string; given(): void }[]>;
  everyMs: number;
}

type Conversation = (child: { stdin: Writable; stdout: Readable }) => void;

/** Nothing is ever written for the session: a planning session, or a test without a store. */
const NO_GUIDANCE: GuidanceFeed = { waiting: async () => [], everyMs: 60_000 };

/**
 * The standard input of a `stream` session: the prompt as the first message, guidance as further
 * messages while it works, closed once the CLI has answered every message with none waiting.
 */
export function streamedInput(
  steering: Extract<Steering, { via: "stream" }>,
  prompt: string,
  feed: GuidanceFeed = NO_GUIDANCE,
): Conversation {
  return ({ stdin, stdout }) => {
    let sent = 1;
    let answered = 0;
    let closed = false;
    let looking: Promise<void> | undefined;
    stdin.write(steering.message(prompt));
    const look = (): Promise<void> => {
      looking ??= feed
        .waiting()
        .then((items) => {
          for (const item of items) {
            if (closed) return;
            stdin.write(steering.message(item.text));
            item.given();
            sent += 1;
          }
        })
        // A store that cannot be read now is asked again at the next look.
        .catch(() => undefined)
        .finally(() => {
          looking = undefined;
        });
      return looking;
    };
    const timer = setInterval(() => void look(), feed.everyMs);
    const end = () => {
      closed = true;
      clearInterval(timer);
    };
    stdin.once("close", end);
    stdout.once("close", end);
    readline.createInterface({ input: stdout }).on("line", (line) => {
      if (!steering.answered(line)) return;
      answered += 1;
      // One last look before closing: guidance written while the CLI answered is given, not lost.
      void look().then(() => {
        if (answered < sent || closed) return;
        end();
        stdin.end();
      });
    });
  };
}

/**
 * The standard input of a `restart` session: the prompt, then closed. Once guidance waits, the
 * session is stopped at the next safe point its output shows (at once for a CLI that shows none);
 * the guidance stays waiting for the session that resumes the work.
 */
export function restartingInput(
  steering: Extract<Steering, { via: "restart" }>,
  prompt: string,
  feed: GuidanceFeed,
  stop: () => void,
): Conversation {
  return ({ stdin, stdout }) => {
    stdin.end(prompt);
    let waiting = false;
    const lines = readline.createInterface({ input: stdout });
    lines.on("line", (line) => {
      if (waiting && steering.safePoint?.(line)) stop();
    });
    const timer = setInterval(() => {
      if (waiting) return;
      void feed
        .waiting()
        .then((items) => {
          if (items.length === 0 || waiting) return;
          waiting = true;
          clearInterval(timer);
          if (!steering.safePoint) stop();
        })
        .catch(() => undefined);
    }, feed.everyMs);
    stdout.once("close", () => clearInterval(timer));
  };
}
