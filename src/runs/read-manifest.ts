import { rm } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { AgentFileError, readAgentFile } from "../workspace/read-agent-file.ts";

export const MANIFEST_FILE = ".lisa-manifest.json";

/** A manifest is a few lines about the work; one larger than this is not a manifest. */
const MAX_MANIFEST_BYTES = 64 * 1024;

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
});

export type Manifest = z.infer<typeof manifestSchema>;

export type ManifestResult = { manifest: Manifest } | { manifest: undefined; problem: string | undefined };

/**
 * Reads and removes `.lisa-manifest.json` from a worktree, so it is never committed.
 * A missing file is no problem; an invalid one is reported and ignored.
 */
export async function takeManifest(worktree: string): Promise<ManifestResult> {
  const file = path.join(worktree, MANIFEST_FILE);
  let text: string | undefined;
  try {
    text = await readAgentFile(file, MAX_MANIFEST_BYTES);
  } catch (error) {
    if (!(error instanceof AgentFileError)) throw error;
    await rm(file, { force: true });
    return { manifest: undefined, problem: `${error.message} It was ignored.` };
  }
  if (text === undefined) return { manifest: undefined, problem: undefined };
  await rm(file, { force: true });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { manifest: undefined, problem: `${MANIFEST_FILE} is not JSON: ${(error as Error).message}` };
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) return { manifest: undefined, problem: `${MANIFEST_FILE} ignored:\n${z.prettifyError(parsed.error)}` };
  return { manifest: parsed.data };
}

/** The manifest the store kept for a step, if the agent wrote a valid one. */
export function currentManifest(step: { manifest: string | null }): Manifest | undefined {
  return step.manifest ? manifestSchema.parse(JSON.parse(step.manifest)) : undefined;
}
