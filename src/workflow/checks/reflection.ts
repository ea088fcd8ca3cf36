import { createHash } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import { sameCause } from "../../markdown/same-cause.ts";
import { type Reflection, reflectionSchema } from "../../records/manifest.ts";
import type { ReflectionRow, StepRow } from "../../store/store.ts";
import { AgentFileError, readAgentFile } from "../../workspace/read-agent-file.ts";
import { fenceAsData } from "../context/render-prompt.ts";
import { BlockedError, type RunContext } from "../context/run-context.ts";
import { MANIFEST_FILE } from "../session/read-manifest.ts";
import type { GateResult } from "./run-gates.ts";

/** As in read-manifest.ts: a manifest is a few lines. */
const MAX_MANIFEST_BYTES = 64 * 1024;

/** Reflections on the same failure after which the agent's words no longer buy another session. */
const SAME_FAILURE_LIMIT = 3;

/**
 * Lisa's own fingerprint of a gate failure: the command and its output with what changes from run
 * to run (worktree path, colours, numbers, hashes, spacing) taken out. The agent's account of the
 * failure plays no part in it.
 */
export function failureSignature(command: string, output: string, worktree: string): string {
  const normalized = output
    .split(worktree)
    .join("<worktree>")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are what is removed
    .replace(/\u001b\[[0-9;]*[A-Za-z]/g, "")
    .replace(/\b[0-9a-f]{7,64}\b/gi, "<hash>")
    .replace(/\d+(\.\d+)?/g, "N")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
  return createHash("sha256").update(`${command}\0${normalized}`).digest("hex").slice(0, 16);
}

/**
 * Takes the reflection out of the manifest the agent left in the worktree, so a later session that
 * writes none is not credited with this one. A missing or malformed reflection is none.
 */
export async function takeReflection(worktree: string): Promise<Reflection | undefined> {
  const file = path.join(worktree, MANIFEST_FILE);
  let text: string | undefined;
  try {
    text = await readAgentFile(file, MAX_MANIFEST_BYTES);
  } catch (error) {
    if (error instanceof AgentFileError) return undefined;
    throw error;
  }
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null || !("reflection" in json)) return undefined;
  const { reflection, ...rest } = json as Record<string, unknown>;
  // Removed first: writeFile would follow a link the agent put in the file's place.
  await rm(file, { force: true });
  // A manifest that held only the reflection (a CI fix's may) leaves none: `{}` is no valid manifest.
  if (Object.keys(rest).length > 0) await writeFile(file, JSON.stringify(rest, null, 2), { flag: "wx" });
  const parsed = reflectionSchema.safeParse(reflection);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Whether a gate failure repeats the one the agent already reflected on, so another session would
 * spend the budget on the same loop. Lisa's signature decides that the failure is the same; the
 * agent's causes only decide how early: the same failure after two reflections giving the same
 * cause, or after three whatever they say. A reason to block, or undefined.
 */
export function repeatedFailure(
  reflections: readonly Pick<ReflectionRow, "gate" | "signature" | "cause">[],
  failure: { gate: string; signature: string },
): string | undefined {
  const trailing: Pick<ReflectionRow, "cause">[] = [];
  for (const item of [...reflections].reverse()) {
    if (item.gate !== failure.gate || item.signature !== failure.signature) break;
    trailing.unshift(item);
  }
  const [before, last] = trailing.slice(-2);
  if (trailing.length >= SAME_FAILURE_LIMIT)
    return `The same gate failure after ${trailing.length} reflections and fixes by the agent: Lisa stopped rather than spend more sessions on \`${failure.gate}\`.`;
  if (before && last && sameCause(before.cause, last.cause)) {
    const why =
      before.cause || last.cause
        ? "with the same cause in the agent's two reflections"
        : "and the agent wrote no reflection on it";
    return `The same gate failure twice, ${why}: Lisa stopped rather than spend the remaining sessions on \`${failure.gate}\`.`;
  }
  return undefined;
}

/** The reflections of earlier sessions on this step, for the next one's prompt: the agent's words, fenced. */
export function reflectionsForPrompt(ctx: RunContext, reflections: readonly ReflectionRow[]): string {
  const written = reflections.filter((r) => r.cause);
  if (written.length === 0) return "";
  const lines = written.map(
    (r) => `- session ${r.iteration}, on \`${r.gate}\`: failed: ${r.what_failed}; cause: ${r.cause}; changed: ${r.change}`,
  );
  return [
    "## Your earlier reflections on this step",
    "",
    "These did not make the gates or the CI pass. Do not repeat a fix that did not work; if your cause is the same as before, look for another.",
    "",
    fenceAsData("the reflections earlier sessions wrote", redactSecrets(lines.join("\n"), ctx.secrets)),
    "",
  ].join("\n");
}

/** This step's reflections in this pass since it last started: after `/lisa fix` the count starts again. */
export async function reflectionsThisTry(ctx: RunContext, step: StepRow): Promise<ReflectionRow[]> {
  const all = await ctx.deps.store.learnings.reflections(step.id, ctx.pass.number);
  return all.filter((r) => r.iteration > step.iteration_base);
}

/** A gate failure as reflections record it: the command, and Lisa's signature of its output. */
export function gateFailure(failure: GateResult, worktree: string): { gate: string; signature: string } {
  return { gate: failure.command, signature: failureSignature(failure.command, failure.output, worktree) };
}

/**
 * Records what the session sent back for `failure` (a gate's, or the pull request's CI's) said of
 * it, under Lisa's signature of the failure; a session that wrote no reflection is recorded too,
 * with none, as the failure still happened.
 */
export async function recordReflection(
  ctx: RunContext,
  step: StepRow,
  iteration: number,
  failure: { gate: string; signature: string },
  worktree: string,
): Promise<void> {
  const said = await takeReflection(worktree);
  const clean = (text: string | undefined) => redactSecrets(text ?? "", ctx.secrets);
  await ctx.deps.store.learnings.addReflection({
    step_id: step.id,
    pass: ctx.pass.number,
    iteration,
    gate: failure.gate,
    signature: failure.signature,
    what_failed: clean(said?.what_failed),
    cause: clean(said?.cause),
    change: clean(said?.change),
  });
}

/** Blocks the step when `failure` repeats what the agent already reflected on (repeatedFailure). */
export async function blockOnRepeat(ctx: RunContext, step: StepRow, failure: GateResult, worktree: string): Promise<void> {
  const reason = repeatedFailure(await reflectionsThisTry(ctx, step), gateFailure(failure, worktree));
  if (reason) throw new BlockedError(reason);
}
