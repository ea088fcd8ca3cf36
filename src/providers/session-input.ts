import type { Conversation } from "../process/run-with-deadline.ts";
import type { Steering } from "./provider.ts";

/** Guidance written for a running session, looked for every `everyMs` while it runs. */
export interface GuidanceFeed {
  /** Guidance not given to the session yet, one message text each; `given` marks one as received. */
  waiting(): Promise<{ text: string; given(): void }[]>;
  everyMs: number;
}

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
  return (stdin) => {
    // Guidance written and not yet echoed back, by text: given once the CLI has taken it in, so a
    // CLI that ends first never had it, and a new session gets it.
    const unechoed = new Map<string, () => void>();
    let closed = false;
    let looking: Promise<void> | undefined;
    stdin.write(steering.message(prompt));
    const look = (): Promise<void> => {
      looking ??= feed
        .waiting()
        .then((items) => {
          for (const item of items) {
            if (closed) return;
            if (unechoed.has(item.text)) continue;
            unechoed.set(item.text, item.given);
            stdin.write(steering.message(item.text));
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
    return {
      line(line) {
        const echoed = steering.echoed(line);
        if (echoed !== undefined) {
          unechoed.get(echoed)?.();
          unechoed.delete(echoed);
          return;
        }
        if (!steering.answered(line)) return;
        // One last look before closing: guidance written while the CLI answered is given, not lost.
        // A message written and not taken in yet starts a turn of its own, which ends in a result too.
        void look().then(() => {
          if (unechoed.size > 0 || closed) return;
          end();
          stdin.end();
        });
      },
      end,
    };
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
  return (stdin) => {
    stdin.end(prompt);
    let waiting = false;
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
    return {
      line(line) {
        if (waiting && steering.safePoint?.(line)) stop();
      },
      end: () => clearInterval(timer),
    };
  };
}
