import { isCiGate } from "../ci/ci-failure.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { guidanceHere } from "../publication/pass-comment.ts";
import type { Manifest } from "../reporting/manifest-schema.ts";
import type { GuidanceRow, StepRow } from "../store/store.ts";
import { fenceAsData } from "../workflow/render-prompt.ts";
import type { RunContext } from "../workflow/run-context.ts";
import { git } from "../workspace/git.ts";
import { ANCHOR_CHECK } from "./anchors.ts";
import { sameCause } from "./reflection.ts";

const HEADER = [
  "# What Lisa learned in this repository",
  "",
  "Lisa proposes these lines in its pull requests, from reviewers' guidance its work addressed, gate failures it saw",
  "fixed and commits people pushed to its branches. Edit them like code: Lisa reads this file from the default branch",
  "into every agent's prompt.",
  "",
].join("\n");

/** One learning is a line: a reviewer's paragraph is cut, not kept whole. */
const MAX_LINE = 200;
/** How much of the file a prompt takes, whatever people made of it. */
const MAX_PROMPT_CHARS = 8_000;
/** Guidance that is a person's: `continue` carries the agent's own refinements, which nobody reviewed. */
const TRUSTED_SOURCES: ReadonlySet<GuidanceRow["source"]> = new Set(["command", "review", "inline", "fix"]);

const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE - 1)}…` : flat;
};

/** The learnings a memory file holds: its `- ` lines, oldest first. */
export function parseMemory(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("- "))
    .map((line) => line.slice(2).trim())
    .filter(Boolean);
}

export function renderMemory(lines: readonly string[]): string {
  return `${HEADER}\n${lines.map((line) => `- ${line}`).join("\n")}\n`;
}

/**
 * The file's lines with `added` taken in: a new line replaces any older one on the same subject (a
 * duplicate, or what a later reviewer said otherwise), and beyond `max` the oldest go.
 */
export function consolidate(existing: readonly string[], added: readonly string[], max: number): string[] {
  let lines = [...existing];
  for (const line of added.map(oneLine)) {
    const subject = line.replace(/\s*\(.*\)$/, "");
    lines = lines.filter((old) => !sameCause(old.replace(/\s*\(.*\)$/, ""), subject));
    lines.push(line);
  }
  return lines.slice(-max);
}

/**
 * What this pass on `step` taught, from trusted sources only: writers' guidance the agent addressed
 * (their words, never the agent's), the gates Lisa saw fail and then pass, and the commits people
 * pushed to the branch. Never an issue body, and nothing the agent wrote.
 */
async function learningsOfPass(ctx: RunContext, step: StepRow, manifest: Manifest | undefined): Promise<string[]> {
  const { store } = ctx.deps;
  // The issue may live in another repository than the memory file.
  const here = ctx.run.owner.toLowerCase() === step.owner.toLowerCase() && ctx.run.repo.toLowerCase() === step.repo.toLowerCase();
  const where = `${here ? "" : `${ctx.run.owner}/${ctx.run.repo}`}#${ctx.run.issue_number}`;
  const numbered = await store.guidance.forPass(ctx.pass.id);
  const addressed = (await guidanceHere(store, ctx.pass.id, step)).filter((item) => {
    const id = `g${numbered.findIndex((g) => g.id === item.id) + 1}`;
    return TRUSTED_SOURCES.has(item.source) && manifest?.guidance?.some((g) => g.id === id && g.status === "addressed");
  });
  const fixedGates = new Set(
    (await store.learnings.reflections(step.id, ctx.pass.number))
      .map((r) => r.gate)
      // A CI check's name is no command to run before finishing.
      .filter((gate) => gate !== ANCHOR_CHECK && !isCiGate(gate)),
  );
  const record = await store.steps.inPass(step.id, ctx.pass.id);
  const humans = JSON.parse(record?.human_shas ?? "[]") as { author: string; subject: string }[];
  return [
    ...addressed.map((g) => `${oneLine(g.body)} (@${g.author}, ${where})`),
    ...[...fixedGates].map((gate) => `Run \`${oneLine(gate)}\` before finishing: it failed on a first attempt (${where})`),
    ...humans.map((c) => `People correct Lisa's work here: keep to “${oneLine(c.subject)}” (@${c.author}, ${where})`),
  ].map((line) => redactSecrets(line, ctx.secrets));
}

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
  const learned = await learningsOfPass(ctx, step, manifest);
  if (learned.length === 0) return;
  // As the pass found it: what the agent wrote into the file is its change, never Lisa's memory.
  const start = (await ctx.deps.store.steps.inPass(step.id, ctx.pass.id))?.start_sha ?? step.start_sha;
  const current = start ? await git(worktree, ["show", `${start}:${file}`]).catch(() => "") : "";
  const next = renderMemory(consolidate(parseMemory(current), learned, max));
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
