import { z } from "zod";

// What the store's JSON columns hold, as zod schemas: the store decodes each column with them once,
// and the layers above take the types. It imports nothing of Lisa's, so every layer may import it.

/** What a judge said of one criterion; `SKIPPED` when the pass touched none of its paths. `reason` is the judge's, untrusted. */
export const judgeViewSchema = z.object({
  criterion: z.string(),
  verdict: z.enum(["PASS", "FAIL", "SKIPPED"]),
  reason: z.string(),
  file: z.string().optional(),
  line: z.number().optional(),
  /** The provider that judged. */
  provider: z.string().optional(),
  /** The judge's last FAIL in this pass that a fix session answered, when this verdict came after it. */
  earlier: z.string().optional(),
});

export type JudgeView = z.infer<typeof judgeViewSchema>;

/** One gate command as Lisa ran it (a line of `steps.gates`): a failing one keeps its output, a judge its verdict. */
export const gateLineSchema = z.object({
  command: z.string(),
  passed: z.boolean(),
  /** A failing gate's output (its tail, redacted), for the tracking comment and a resumed fix session. */
  output: z.string().optional(),
  /** Green in the previous pass, red now. */
  regressed: z.boolean().optional(),
  /** The repository it ran in, named where gates of several repositories are listed together. */
  repo: z.string().optional(),
  /** A check of the pull request's own CI, not a command Lisa ran; `pending` when it was still running, `fixed` when a fix of this pass made it green. */
  ci: z.boolean().optional(),
  pending: z.boolean().optional(),
  fixed: z.boolean().optional(),
  /** A judge's verdict on a criterion, not a command: `command` is then `judge: <criterion>`. */
  judge: judgeViewSchema.optional(),
});

export type GateLine = z.infer<typeof gateLineSchema>;

/** The review gate of one pull request of the run, as the gate evaluation (evaluate-gate.ts) found it (`steps.gate`). */
export const prGateSchema = z.object({
  /** `owner/name`. */
  repo: z.string(),
  number: z.number(),
  url: z.string(),
  status: z.enum(["approved", "pending", "changes_requested", "merged", "dropped"]),
  /** Writers whose latest review approves the current head. */
  approvers: z.array(z.string()),
  /** Writers whose latest review requests changes. */
  blockers: z.array(z.string()),
  headSha: z.string().nullable(),
  /** Writers whose latest review approves an older head: they must approve again. */
  stale: z.array(z.string()).optional(),
  /** With `review.accept: github`: GitHub's own `reviewDecision` (null when the base has no review rule). */
  githubDecision: z.string().nullable().optional(),
  /** Approvals the base branch's rules ask for, when GitHub still wants more and said how many. */
  requiredApprovals: z.number().optional(),
});

export type PrGate = z.infer<typeof prGateSchema>;

/** A file changed against the base (`changed_files`). */
export const fileChangeSchema = z.object({ path: z.string(), added: z.number(), deleted: z.number() });

export type FileChange = z.infer<typeof fileChangeSchema>;

/** A commit a human pushed that a pass built on (`step_passes.human_shas`). */
export const humanCommitSchema = z.object({ sha: z.string(), author: z.string(), subject: z.string() });

export type HumanCommit = z.infer<typeof humanCommitSchema>;

/**
 * A failure of the pull request's CI that sends the step back to its agent, kept with the step
 * (`steps.ci_failure`) until a fix session has answered it: a restarted Lisa, or a session resumed
 * for guidance, still has the report to give the agent.
 */
export const ciFailureSchema = z.strictObject({
  /** The pass, and the try in it (the step's iteration_base), it came in: a later one starts without it. */
  pass: z.number().int(),
  base: z.number().int(),
  /** What failed (ci-report.ts): redacted, still to be fenced. */
  report: z.string(),
  /** Lisa's fingerprint of the failure for "the same way twice", hashed short; never the agent's words. */
  signature: z.string(),
  /** The failing checks. */
  names: z.array(z.string()).min(1),
});

export type CiFailure = z.infer<typeof ciFailureSchema>;
