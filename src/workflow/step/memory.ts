import { redactSecrets } from "../../markdown/redact-secrets.ts";
import { learnedInPass, memoryWith, parseMemory } from "../../publication/memory-file.ts";
import type { Manifest } from "../../records/manifest.ts";
import type { StepPassRow, StepRow } from "../../store/store.ts";
import { git } from "../../workspace/git.ts";
import { mirrorPath } from "../../workspace/workspace-paths.ts";
import { fenceAsData } from "../context/render-prompt.ts";
import type { RunContext } from "../context/run-context.ts";

/** How much of the file a prompt takes, whatever people made of it. */
const MAX_PROMPT_CHARS = 8_000;

/**
 * The memory file as Lisa would have it on `step`'s branch through pass `through`, from trusted
 * sources only, never from a commit the agent wrote: the file of the newest human commit on the
 * branch that changed it, else the default branch's (where the branch forked from it), with what
 * the passes since then taught taken in under `run_pr`. `at` is a commit of the branch, for the fork point.
 */
async function trustedMemory(ctx: RunContext, step: StepRow, at: string, through: number, manifest: Manifest | undefined) {
  const { file, max_lines: max, propose } = ctx.config.memory;
  const { store } = ctx.deps;
  const mirror = mirrorPath(ctx.deps.workspace, { owner: step.owner, repo: step.repo });
  const read = (sha: string) => git(mirror, ["cat-file", "blob", `${sha}:${file}`]).catch(() => "");
  const records = (await store.steps.history(step.id)).filter((record) => record.number <= through);
  let base: string | undefined;
  let from = 1;
  for (const record of [...records].reverse()) {
    const humans = record.human_shas ?? [];
    for (const { sha } of [...humans].reverse()) {
      const touched = await git(mirror, [
        "diff-tree",
        "-r",
        "-m",
        "--first-parent",
        "--name-only",
        "--no-commit-id",
        sha,
        "--",
        file,
      ]).catch(() => "");
      if (!touched.trim()) continue;
      base = await read(sha);
      // Human commits are recorded by the pass that built on them: its lessons and later ones are not in theirs.
      from = record.number;
      break;
    }
    if (base !== undefined) break;
  }
  if (base === undefined) {
    const fork = step.base_branch
      ? await git(mirror, ["merge-base", `refs/remotes/origin/${step.base_branch}`, at]).catch(() => "")
      : "";
    base = fork.trim() ? await read(fork.trim()) : "";
  }
  if (propose !== "run_pr") return { base, lisas: base, lisasBefore: base, learnedNow: [] as string[] };
  const learned: string[] = [];
  let learnedNow: string[] = [];
  // This pass counts whatever its state; earlier ones only if they delivered (or rightly changed nothing).
  const passes: { pass_id: number; number: number; manifest: Manifest | null }[] = records.filter(
    (r) => r.number >= from && (r.number === through || r.state === "delivered" || r.state === "unchanged"),
  );
  if (through === ctx.pass.number && !passes.some((r) => r.number === through))
    passes.push({ pass_id: ctx.pass.id, number: through, manifest: null });
  for (const record of passes) {
    const current = record.number === through;
    const passManifest = current ? manifest : (record.manifest ?? undefined);
    const pass = { id: record.pass_id, number: record.number };
    const lessons = await learnedInPass(store, { run: ctx.run, pass, step, manifest: passManifest, secrets: ctx.secrets });
    learned.push(...lessons);
    if (current) learnedNow = lessons;
  }
  const before = learned.slice(0, learned.length - learnedNow.length);
  return { base, lisas: memoryWith(base, learned, max), lisasBefore: memoryWith(base, before, max), learnedNow };
}

/** The file's text for comparing: git's output lacks a file's last newline. */
const sameText = (a: string, b: string) => a.replace(/\n+$/, "") === b.replace(/\n+$/, "");

/**
 * With `memory.propose: run_pr`, adds what the pass taught to the memory file as a commit of its
 * own on the step's branch, so the reviewers review it with the change and merging the pull request
 * merges it. The file it writes starts from Lisa's own (trustedMemory), never from what the agent
 * left in the branch. Written through git's index only: no path the agent left in the worktree is followed.
 */
export async function proposeMemory(
  ctx: RunContext,
  step: StepRow,
  worktree: string,
  manifest: Manifest | undefined,
): Promise<void> {
  const { file, propose } = ctx.config.memory;
  if (propose !== "run_pr") return;
  const head = (await git(worktree, ["rev-parse", "--verify", "HEAD"])).trim();
  const { lisas: next, learnedNow } = await trustedMemory(ctx, step, head, ctx.pass.number, manifest);
  if (learnedNow.length === 0) return;
  // Already proposed, e.g. by this pass before a restart.
  if (sameText(next, await git(worktree, ["show", `HEAD:${file}`]).catch(() => ""))) return;
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
 * Whether the memory file at the end of this pass on `step` holds an edit of the agent's: anything
 * Lisa would not have written there from trusted sources (trustedMemory). A human must look, since
 * once merged it reaches every later prompt; it stays named in every pass's package until a person
 * takes it in (a commit of theirs that changes the file) or the run ends.
 */
export async function agentEditedMemory(
  ctx: RunContext,
  step: StepRow,
  record: StepPassRow | undefined,
  manifest: Manifest | undefined,
): Promise<boolean> {
  if (!record?.end_sha) return false;
  const number = (await ctx.deps.store.steps.history(step.id)).find((r) => r.id === record.id)?.number ?? ctx.pass.number;
  const mirror = mirrorPath(ctx.deps.workspace, { owner: step.owner, repo: step.repo });
  const after = await git(mirror, ["cat-file", "blob", `${record.end_sha}:${ctx.config.memory.file}`]).catch(() => "");
  // Lisa's own file with this pass's lessons, or without them (a pass that stopped before its memory commit).
  const { base, lisas, lisasBefore } = await trustedMemory(ctx, step, record.end_sha, number, manifest);
  return ![base, lisas, lisasBefore].some((text) => sameText(after, text));
}
