import { z } from "zod";

/** The file a planning session writes at the root of its workspace. */
export const PLAN_FILE = ".lisa-plan.json";

/** Longest scope a step may carry; a plan is a list of pointers, not the implementation. */
export const MAX_SCOPE_LENGTH = 2_000;

/** More steps than this is no plan one issue should carry (and the configuration allows at most 20 repositories). */
export const MAX_STEPS = 50;

/** The shape of `.lisa-plan.json`. */
export const planSchema = z.strictObject({
  /** Why the work is split this way; shown to humans, optional. */
  rationale: z.string().trim().max(4_000).optional(),
  steps: z
    .array(
      z.strictObject({
        /** `owner/name`, exactly one of the configured repositories. */
        repo: z.string().trim().min(1),
        /** What to do in that repository. */
        scope: z.string().trim().min(1).max(MAX_SCOPE_LENGTH),
        /** Position in the sequence, 1 for the first. */
        order: z.int().min(1),
      }),
    )
    .min(1)
    .max(MAX_STEPS),
  /** Requests the planner cannot plan (a repository not configured, a change outside the issue), with why. */
  out_of_scope: z
    .array(z.strictObject({ request: z.string().trim().min(1).max(1_000), reason: z.string().trim().min(1).max(1_000) }))
    .max(20)
    .optional(),
});

export type Plan = z.infer<typeof planSchema>;
