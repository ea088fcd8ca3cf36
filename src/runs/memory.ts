import { redactSecrets } from "../markdown/redact-secrets.ts";
import { learnedInPass, memoryWith, parseMemory } from "../publication/memory-file.ts";
import type { Manifest } from "../reporting/manifest-schema.ts";
import type { StepPassRow, StepRow } from "../store/store.ts";
import { fenceAsData } from "../workflow/render-prompt.ts";
import type { RunContext } from "../workflow/run-context.ts";
import { git } from "../workspace/git.ts";
import { mirrorPath } from "../workspace/workspace-paths.ts";

/** How much of the file a prompt takes, whatever people made of it. */
const MAX_PROMPT_CHARS = 8_000;

/**
 * With `memory.propose: run_pr`, adds what the pass taught to the memory file as a commit of its
 * own on the step's branch, so the reviewers review it with the change and merging the pull request
 * merges it. Written through git's index only: no path the agent left in the worktree is followed.
 */
export async function proposeMemory(
  ctx: RunContext,
  step: StepRow,
  worktree: string,
  manifest: Manifest | undefined,
): Promise<void> {
  const { file, max_lines: max, propose } = ctx.config.memory;
  if (propose !== "run_pr") return;
  const passOfStep = { run: ctx.run, pass: ctx.pass, step, manifest, secrets: ctx.secrets };
  const learned = await learnedInPass(ctx.deps.store, passOfStep);
  if (learned.length === 0) return;
  // As the pass found it: what the agent wrote into the file is its change, never Lisa's memory.
  const start = (await ctx.deps.store.steps.inPass(step.id, ctx.pass.id))?.start_sha ?? step.start_sha;
  const current = start ? await git(worktree, ["show", `${start}:${file}`]).catch(() => "") : "";
  const next = memoryWith(current, learned, max);
  // Already proposed, e.g. by this pass before a restart.
  if (next === current || next === (await git(worktree, ["show", `HEAD:${file}`]).catch(() => ""))) return;
  try {
    const blob = (await git(worktree, ["hash-object", "-w", "--stdin"], { input: next })).trim();
    await git(worktree, ["update-index", "--add", "--cacheinfo", `100644,${blob},${file}`]);
    await git(worktree, ["commit", "--quiet", "--no-verify", "-m", `Lisa's memory: what pass ${ctx.pass.number} taught`]);
    await git(worktree, ["checkout", "HEAD", "--", file]);
  } catch (error) {
    // The agent's tree may make the path unwritable (a file where a folder must be): the change goes on without it.
    await git(worktree, ["reset", "--quiet", "--", file]).catch(() => undefined);
    ctx.deps.log.warn({ err: error, runId: ctx.run.id }, "could not propose the memory file");
  }
}

/** The memory file as the default branch has it, for a prompt: reviewed text, still fenced as data. */
export async function memoryForPrompt(ctx: RunContext, worktree: string, base: string | null): Promise<string> {
  if (!base) return "";
  const text = await git(worktree, ["show", `refs/remotes/origin/${base}:${ctx.config.memory.file}`]).catch(() => "");
  const lines = parseMemory(text.slice(0, MAX_PROMPT_CHARS));
  if (lines.length === 0) return "";
  return [
    "## What Lisa learned in this repository",
    "",
    "Reviewers of earlier pull requests here taught these; follow them where they concern this task.",
    "",
    fenceAsData(
      `the repository's memory file, \`${ctx.config.memory.file}\` on its default branch`,
      redactSecrets(lines.map((line) => `- ${line}`).join("\n"), ctx.secrets),
    ),
    "",
  ].join("\n");
}

/**
 * Whether the agent changed the memory file in this pass on `step` (a human must look: once merged
 * it reaches every later prompt). The file at the pass's end is compared with the file at its start
 * and, under `run_pr`, with what Lisa's own memory commit writes, so that commit is never named.
 */
export async function agentEditedMemory(
  ctx: RunContext,
  step: StepRow,
  record: StepPassRow | undefined,
  manifest: Manifest | undefined,
): Promise<boolean> {
  if (!record?.start_sha || !record.end_sha || record.start_sha === record.end_sha) return false;
  const { file, max_lines: max, propose } = ctx.config.memory;
  const mirror = mirrorPath(ctx.deps.workspace, { owner: step.owner, repo: step.repo });
  const read = (sha: string) => git(mirror, ["cat-file", "blob", `${sha}:${file}`]).catch(() => undefined);
  const before = await read(record.start_sha);
  const after = await read(record.end_sha);
  if (after === before) return false;
  if (propose !== "run_pr") return true;
  const learned = await learnedInPass(ctx.deps.store, { run: ctx.run, pass: ctx.pass, step, manifest, secrets: ctx.secrets });
  // git's output lacks the file's last newline.
  return learned.length === 0 || after !== memoryWith(before ?? "", learned, max).replace(/\n$/, "");
}
