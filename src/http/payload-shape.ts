import { z } from "zod";

const repository = z.looseObject({ name: z.string(), owner: z.looseObject({ login: z.string() }) });
const numbered = z.looseObject({ number: z.number().int() });
const identified = z.looseObject({ id: z.number().int() });
const atHead = z.looseObject({ head_sha: z.string() });

/** What each event Lisa listens to always carries and Lisa reads, as GitHub's webhook schema types it. */
const SHAPES: Record<string, z.ZodType> = {
  issues: z.looseObject({ repository, issue: numbered }),
  issue_comment: z.looseObject({ repository, issue: numbered, comment: identified }),
  pull_request: z.looseObject({ repository, pull_request: numbered }),
  pull_request_review: z.looseObject({ repository, pull_request: numbered, review: identified }),
  pull_request_review_comment: z.looseObject({ repository, pull_request: numbered, comment: identified }),
  check_run: z.looseObject({ repository, check_run: atHead }),
  check_suite: z.looseObject({ repository, check_suite: atHead }),
  status: z.looseObject({ repository, sha: z.string() }),
};

/**
 * Refuses a delivery whose payload lacks what its event always carries with 400: sending it again
 * brings the same payload, where a 500 says the fault is Lisa's and worth a retry.
 */
export function assertPayloadShape(event: string, payload: unknown): void {
  const shape = SHAPES[event];
  if (!shape) return;
  const parsed = shape.safeParse(payload);
  if (parsed.success) return;
  const where = parsed.error.issues.map((issue) => issue.path.join(".") || "payload").join(", ");
  throw Object.assign(new Error(`malformed ${event} payload: ${where}`), { status: 400 });
}
