import { z } from "zod";
import type { ReflectionRow, SessionRow, StepRow } from "../store/store.ts";
import type { GateResult } from "./run-gates.ts";

/** A line of `steps.gates` as build-step.ts writes it: a failing gate keeps its output. */
const keptGateSchema = z.object({
  command: z.string(),
  passed: z.boolean(),
  output: z.string().optional(),
  /** A check of the pull request's CI (ci-gate.ts), never a gate a session was sent to fix. */
  ci: z.boolean().optional(),
});

/**
 * The gate failure the step's last session in its current try was sent to fix and has not answered
 * (no reflection at its iteration): cut off by a restart, or stopped for guidance. No gates ran
 * since, so `steps.gates` still holds the failure, output and all, as that session was given it.
 */
export function pendingGateFailure(
  step: Pick<StepRow, "gates" | "iteration_base">,
  sessions: readonly Pick<SessionRow, "iteration" | "purpose">[],
  reflections: readonly Pick<ReflectionRow, "iteration">[],
): GateResult | undefined {
  const last = sessions.filter((s) => s.iteration > step.iteration_base).at(-1);
  if (last?.purpose !== "fix_gates" || reflections.some((r) => r.iteration === last.iteration)) return undefined;
  const lines = z.array(keptGateSchema).safeParse(JSON.parse(step.gates ?? "[]"));
  const failed = lines.success ? lines.data.find((line) => !line.passed && !line.ci) : undefined;
  if (failed?.output === undefined) return undefined;
  return { command: failed.command, passed: false, output: failed.output, durationMs: 0 };
}
