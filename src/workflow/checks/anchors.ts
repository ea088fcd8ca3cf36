import { existsSync } from "node:fs";
import path from "node:path";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import type { Manifest } from "../../records/manifest.ts";
import { ANCHOR_CHECK } from "../../store/learnings.ts";
import type { StepPassRow, StepRow } from "../../store/store.ts";
import { git } from "../../workspace/git.ts";
import { fenceAsData } from "../context/render-prompt.ts";
import { BlockedError, type RunContext } from "../context/run-context.ts";
import { failureSignature, reflectionsThisTry } from "./reflection.ts";
import { type GateResult, type RunGatesOptions, runGates } from "./run-gates.ts";

/** Anchor tests listed in a prompt; a pass that added more than this adds them all the same. */
const MAX_LISTED = 50;

const isTest = (ctx: RunContext, file: string) => ctx.config.anchors.tests.some((glob) => path.matchesGlob(file, glob));

/**
 * At the end of a delivered pass: the gates that passed and the test files the agent added or
 * changed (and kept) become the step's anchors for the passes after it.
 */
export async function recordAnchors(ctx: RunContext, stepId: number, worktree: string): Promise<void> {
  if (ctx.config.anchors.mode === "off") return;
  const { store } = ctx.deps;
  const record = await store.steps.inPass(stepId, ctx.pass.id);
  const lines = record?.gates ?? (await store.steps.get(stepId)).gates ?? [];
  // Only configured gate commands anchor: a CI check's name is not a command (and its author may be anyone who can push a workflow).
  const gates = lines.filter((g) => g.passed && !g.ci && ctx.config.gates.includes(g.command));
  // A judge anchors by its criterion once it said PASS (not when it was skipped).
  const judges = lines.flatMap((g) => (g.judge?.verdict === "PASS" ? [g.judge.criterion] : []));
  const files = (record?.changed_files ?? []).filter((f) => isTest(ctx, f.path) && existsSync(path.join(worktree, f.path)));
  await store.learnings.addAnchors(stepId, ctx.pass.number, [
    ...gates.map((g) => ({ kind: "gate" as const, value: g.command })),
    ...judges.map((criterion) => ({ kind: "judge" as const, value: criterion })),
    ...files.map((f) => ({ kind: "test" as const, value: f.path })),
  ]);
}

/** The anchor tests of earlier passes this pass changed (`M`) or deleted (`D`) in the worktree. */
async function touchedAnchors(ctx: RunContext, step: StepRow, worktree: string, start: string) {
  const tests = (await ctx.deps.store.learnings.anchorsBefore(step.id, ctx.pass.number)).filter((a) => a.kind === "test");
  if (tests.length === 0) return [];
  // The agent named these files: `:(exclude)…` and the like are paths here, never pathspec magic.
  const paths = tests.map((t) => t.value);
  const status = await git(worktree, ["--literal-pathspecs", "diff", "--name-status", "--no-renames", start, "--", ...paths]);
  return status
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [kind = "", ...rest] = line.split("\t");
      return { kind: kind.startsWith("D") ? ("deleted" as const) : ("changed" as const), path: rest.join("\t") };
    });
}

/**
 * After the gates passed in a later pass: the anchors of earlier passes still hold. An anchor gate
 * no longer configured runs again; an anchor test deleted (or, with `anchors: strict`, changed)
 * fails the check, which sends the step back to the agent before any human sees it, and blocks it
 * when the agent was sent back for the same thing already.
 */
export async function checkAnchors(
  ctx: RunContext,
  step: StepRow,
  worktree: string,
  options: RunGatesOptions,
): Promise<GateResult[]> {
  const { store } = ctx.deps;
  if (ctx.config.anchors.mode === "off" || ctx.pass.number === 1) return [];
  const anchors = await store.learnings.anchorsBefore(step.id, ctx.pass.number);
  const dropped = anchors.filter((a) => a.kind === "gate" && !ctx.config.gates.includes(a.value)).map((a) => a.value);
  const results = dropped.length ? await runGates(dropped, options) : [];
  if (results.some((r) => !r.passed)) return results;
  const start = (await store.steps.inPass(step.id, ctx.pass.id))?.start_sha ?? step.start_sha;
  if (!start) return results;
  const strict = ctx.config.anchors.mode === "strict";
  const broken = (await touchedAnchors(ctx, step, worktree, start)).filter((t) => t.kind === "deleted" || strict);
  if (broken.length === 0) return results;
  const output = redactSecrets(
    [
      "These test files were delivered in an earlier pass and passed; they are this pull request's anchors:",
      ...broken.map((b) => `- ${b.path} was ${b.kind} in this pass`),
      strict
        ? "This repository's `anchors: strict` refuses changes to them: restore them and make the change pass them."
        : "Restore them, and make the change pass them.",
    ].join("\n"),
    ctx.secrets,
  );
  const signature = failureSignature(ANCHOR_CHECK, output, worktree);
  if ((await reflectionsThisTry(ctx, step)).some((r) => r.gate === ANCHOR_CHECK && r.signature === signature)) {
    throw new BlockedError(
      `The agent was sent back to keep the anchor tests and broke them again: ${broken.map((b) => `\`${b.path}\` ${b.kind}`).join(", ")}.`,
    );
  }
  return [...results, { command: ANCHOR_CHECK, passed: false, output, durationMs: 0 }];
}

/** The anchors for a later pass's prompt: the file names came from an agent, so they are fenced. */
export async function anchorsForPrompt(ctx: RunContext, step: StepRow): Promise<string> {
  if (ctx.config.anchors.mode === "off") return "";
  const tests = (await ctx.deps.store.learnings.anchorsBefore(step.id, ctx.pass.number)).filter((a) => a.kind === "test");
  if (tests.length === 0) return "";
  const rule =
    ctx.config.anchors.mode === "strict"
      ? "This repository's `anchors: strict` refuses any change to them."
      : 'If you must change one, say why in `.lisa-manifest.json`: `"anchor_edits": [{"path": "…", "reason": "…"}]`; the reviewers see it.';
  return [
    "## Anchor tests",
    "",
    `These test files were delivered in earlier passes and passed. They must keep passing, and must not be deleted. ${rule}`,
    "",
    fenceAsData(
      "the anchor test files",
      redactSecrets(
        tests
          .slice(0, MAX_LISTED)
          .map((t) => `- ${t.value}`)
          .join("\n"),
        ctx.secrets,
      ),
    ),
    "",
  ].join("\n");
}

/** The anchor tests of earlier passes this delivered pass edited, with the reason the agent gave. */
export async function editedAnchors(
  ctx: RunContext,
  step: StepRow,
  record: StepPassRow | undefined,
  manifest: Manifest | undefined,
): Promise<{ path: string; reason?: string }[]> {
  const changed = (record?.changed_files ?? []).map((f) => f.path);
  const anchors = await ctx.deps.store.learnings.anchorsBefore(step.id, ctx.pass.number);
  return anchors
    .filter((a) => a.kind === "test" && changed.includes(a.value))
    .map((a) => {
      const reason = manifest?.anchor_edits?.find((e) => e.path === a.value)?.reason;
      return reason ? { path: a.value, reason } : { path: a.value };
    });
}
