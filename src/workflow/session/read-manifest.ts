import { rm } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { type Manifest, manifestSchema } from "../../records/manifest.ts";
import { AgentFileError, readAgentFile } from "../../workspace/read-agent-file.ts";

export const MANIFEST_FILE = ".lisa-manifest.json";

/** A manifest is a few lines about the work; one larger than this is not a manifest. */
const MAX_MANIFEST_BYTES = 64 * 1024;

export type ManifestResult = { manifest: Manifest } | { manifest: undefined; problem: string | undefined };

/**
 * Reads and removes `.lisa-manifest.json` from a worktree, so it is never committed.
 * A missing file is no problem; an invalid one is reported and ignored. With `amends`, the file
 * corrects that manifest field by field: each field it has replaces that one, before validation.
 */
export async function takeManifest(worktree: string, amends?: Manifest): Promise<ManifestResult> {
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
  const fields = amends && typeof json === "object" && json !== null && !Array.isArray(json) ? { ...amends, ...json } : json;
  const parsed = manifestSchema.safeParse(fields);
  if (!parsed.success) return { manifest: undefined, problem: `${MANIFEST_FILE} ignored:\n${z.prettifyError(parsed.error)}` };
  return { manifest: parsed.data };
}
