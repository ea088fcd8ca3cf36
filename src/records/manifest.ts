import { z } from "zod";

/** The agent's reflection on the gate failure it was sent back for (docs/operations.md, What Lisa learns): a few lines, not an essay. */
export const reflectionSchema = z.strictObject({
  /** What failed, in the agent's words. */
  what_failed: z.string().trim().min(1).max(300),
  /** The likely cause it found. */
  cause: z.string().trim().min(1).max(300),
  /** What it changed, or will change, because of it. */
  change: z.string().trim().min(1).max(300),
});

export type Reflection = z.infer<typeof reflectionSchema>;

// The agent's manifest as Lisa keeps it: read from the worktree by the workflow (read-manifest.ts),
// rendered into pull requests and packages by publication.

/** What the agent may say about its change; Lisa turns it into the pull request. */
export const manifestSchema = z.strictObject({
  /** Pull request title, imperative mood. */
  title: z.string().trim().min(1).max(200),
  /** One or two sentences: what the change does. */
  what: z.string().trim().min(1).max(4_000),
  /** Why the change is needed. */
  why: z.string().trim().max(4_000).optional(),
  /** One entry per notable change, e.g. "`src/foo.ts` — added X". */
  key_changes: z.array(z.string().trim().min(1).max(1_000)).max(50).optional(),
  /** What the agent ran or checked. */
  testing: z.string().trim().max(4_000).optional(),
  /** What this pass did and why, for the review package. */
  pass_summary: z.string().trim().max(4_000).optional(),
  /** How each guidance item (`g1`, `g2`, … as numbered in the prompt) was handled. */
  guidance: z
    .array(
      z.strictObject({
        id: z.string().regex(/^g\d+$/),
        status: z.enum(["addressed", "partly", "not_addressed", "not_applicable"]),
        note: z.string().trim().max(1_000).optional(),
      }),
    )
    .max(50)
    .optional(),
  /** Judgement calls the reviewers should make. */
  open_questions: z.array(z.string().trim().min(1).max(1_000)).max(20).optional(),
  /** Whether the agent thinks the work is done (accept), worth another pass (continue), or stuck (blocked). */
  recommendation: z.enum(["accept", "continue", "blocked"]).optional(),
  /** What a next pass could improve; `/lisa continue` does these. */
  refinements: z.array(z.string().trim().min(1).max(1_000)).max(20).optional(),
  /** With `recommendation: blocked`: what was tried and what a human must provide. */
  blocked: z.strictObject({ tried: z.string().trim().max(2_000), needed: z.string().trim().max(2_000) }).optional(),
  /** Why nothing needed to change in this pass; without it, a pass that changes nothing is blocked. */
  no_change_reason: z.string().trim().min(1).max(2_000).optional(),
  /** Asked for after a failed gate; Lisa takes it out of the manifest once it has recorded it. */
  reflection: reflectionSchema.optional(),
  /** Why each anchor test file of an earlier pass was changed, for the review package. */
  anchor_edits: z
    .array(z.strictObject({ path: z.string().trim().min(1).max(300), reason: z.string().trim().min(1).max(500) }))
    .max(50)
    .optional(),
});

export type Manifest = z.infer<typeof manifestSchema>;
