import { describe, expect, it } from "vitest";
import { type Log, redactingLog } from "../../src/security/redacting-log.ts";

describe("redactingLog", () => {
  it("redacts held values and secret shapes from messages, fields, nested objects and errors", () => {
    const lines: { object: unknown; message?: string }[] = [];
    const sink: Log = {
      info: (object, message) => lines.push({ object, message }),
      warn: (object, message) => lines.push({ object, message }),
      error: (object, message) => lines.push({ object, message }),
    };
    const log = redactingLog(sink, ["off-pattern-auth-token"]);
    const error = new Error("agent said off-pattern-auth-token", { cause: { stderr: `ghp_${"x".repeat(36)}` } });
    log.error({ err: error, runId: 3, detail: { stderr: ["off-pattern-auth-token"] } }, "failed with off-pattern-auth-token");

    const text = JSON.stringify(lines, (_key, value) =>
      value instanceof Error ? { message: value.message, stack: value.stack, cause: value.cause } : value,
    );
    expect(text).not.toContain("off-pattern-auth-token");
    expect(text).not.toContain("ghp_xxxx");
    expect(lines[0]?.message).toBe("failed with ‹redacted›");
    const logged = lines[0]?.object as { err: Error; runId: number };
    expect(logged.err).toBeInstanceOf(Error);
    expect(logged.err.message).toBe("agent said ‹redacted›");
    expect(logged.runId).toBe(3);
  });
});
