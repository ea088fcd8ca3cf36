import { isCiGate } from "../ci/ci-failure.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { sameCause } from "../markdown/same-cause.ts";
import type { Manifest } from "../records/manifest.ts";
import { ANCHOR_CHECK } from "../store/learnings.ts";
import type { GuidanceRow, RunRow, StepRow, Store } from "../store/store.ts";
import { guidanceHere } from "./pass-comment.ts";

// The memory file (docs/operations.md, What Lisa learns): what runs taught Lisa in a repository, as lines people review like
// code, and what a pass or a whole run taught, from trusted sources only.

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
/** Guidance that is a person's: `continue` carries the agent's own refinements, which nobody reviewed. */
const TRUSTED_SOURCES: ReadonlySet<GuidanceRow["source"]> = new Set(["command", "review", "inline", "fix"]);

export const oneLine = (text: string) => {
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

/** One pass of one step, as the store keeps it, with what the agent's manifest said of its guidance. */
export interface PassOfStep {
  run: RunRow;
  pass: { id: number; number: number };
  step: StepRow;
  manifest: Manifest | undefined;
  secrets: readonly string[];
}

/**
 * What this pass on `step` taught, from trusted sources only: writers' guidance the agent addressed
 * (their words, never the agent's), the gates Lisa saw fail and then pass, and the commits people
 * pushed to the branch. Never an issue body, and nothing the agent wrote.
 */
export async function learnedInPass(store: Store, { run, pass, step, manifest, secrets }: PassOfStep): Promise<string[]> {
  // The issue may live in another repository than the memory file.
  const here = run.owner.toLowerCase() === step.owner.toLowerCase() && run.repo.toLowerCase() === step.repo.toLowerCase();
  const where = `${here ? "" : `${run.owner}/${run.repo}`}#${run.issue_number}`;
  const numbered = await store.guidance.forPass(pass.id);
  const addressed = (await guidanceHere(store, pass.id, step)).filter((item) => {
    const id = `g${numbered.findIndex((g) => g.id === item.id) + 1}`;
    return TRUSTED_SOURCES.has(item.source) && manifest?.guidance?.some((g) => g.id === id && g.status === "addressed");
  });
  const fixedGates = new Set(
    (await store.learnings.reflections(step.id, pass.number))
      .map((r) => r.gate)
      // A CI check's name is no command to run before finishing.
      .filter((gate) => gate !== ANCHOR_CHECK && !isCiGate(gate)),
  );
  const record = await store.steps.inPass(step.id, pass.id);
  const humans = record?.human_shas ?? [];
  return [
    ...addressed.map((g) => `${oneLine(g.body)} (@${g.author}, ${where})`),
    ...[...fixedGates].map((gate) => `Run \`${oneLine(gate)}\` before finishing: it failed on a first attempt (${where})`),
    ...humans.map((c) => `People correct Lisa's work here: keep to “${oneLine(c.subject)}” (@${c.author}, ${where})`),
  ].map((line) => redactSecrets(line, secrets));
}

/** What every pass of the run that delivered (or rightly left unchanged) `step` taught, oldest first. */
export async function learnedInRun(store: Store, run: RunRow, step: StepRow, secrets: readonly string[]): Promise<string[]> {
  const learned: string[] = [];
  for (const record of await store.steps.history(step.id)) {
    if (record.state !== "delivered" && record.state !== "unchanged") continue;
    const manifest = record.manifest ?? undefined;
    const pass = { id: record.pass_id, number: record.number };
    learned.push(...(await learnedInPass(store, { run, pass, step, manifest, secrets })));
  }
  return learned;
}

/** The memory file `current` with `learned` taken in, as Lisa proposes it; `current` itself when nothing was learned. */
export function memoryWith(current: string, learned: readonly string[], max: number): string {
  return learned.length === 0 ? current : renderMemory(consolidate(parseMemory(current), learned, max));
}
