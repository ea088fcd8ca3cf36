import { redactSecrets } from "../markdown/redact-secrets.ts";

/** The subset of pino's interface Lisa logs through. */
export interface Log {
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

/** How deep a logged object is followed: log fields are shallow, and a cycle must not hang a log call. */
const MAX_DEPTH = 6;

/**
 * A log that redacts, in every message and every string of every logged object (errors' messages
 * and stacks included), the secrets Lisa holds and anything shaped like a secret. An agent's
 * stderr, a failing git command or a GitHub error body can carry a key into a log line, and logs
 * go where secrets must not: log shippers, support tickets.
 */
export function redactingLog(log: Log, secrets: readonly string[]): Log {
  const clean = (message: string | undefined) => (message === undefined ? undefined : redactSecrets(message, secrets));
  const scrub = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return redactSecrets(value, secrets);
    if (value === null || typeof value !== "object" || depth >= MAX_DEPTH) return value;
    if (value instanceof Error) {
      // Kept an Error, so the logger's error serializer still shows its type, message and stack.
      const copy = new Error(redactSecrets(value.message, secrets));
      copy.name = value.name;
      copy.stack = value.stack === undefined ? undefined : redactSecrets(value.stack, secrets);
      if (value.cause !== undefined) copy.cause = scrub(value.cause, depth + 1);
      return copy;
    }
    if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, depth + 1)]));
  };
  return {
    info: (object, message) => log.info(scrub(object, 0) as object, clean(message)),
    warn: (object, message) => log.warn(scrub(object, 0) as object, clean(message)),
    error: (object, message) => log.error(scrub(object, 0) as object, clean(message)),
  };
}
