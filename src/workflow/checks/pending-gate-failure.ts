import type { ReflectionRow, SessionRow, StepRow } from "../../store/store.ts";
import type { GateResult } from "./run-gates.ts";

/**
 * The gate failure (or judge's FAIL) the step's last session in its current try was sent to fix
 * and has not answered (no reflection at its iteration): cut off by a restart, or stopped for
 * guidance. No gates ran since, so `steps.gates` still holds the failure, output and all, as that
 * session was given it.
 */
export function pendingGateFailure(
  step: Pick<StepRow, "gates" | "iteration_base">,
  sessions: readonly Pick<SessionRow, "iteration" | "purpose">[],
  reflections: readonly Pick<ReflectionRow, "iteration">[],
): GateResult | undefined {
  const last = sessions.filter((s) => s.iteration > step.iteration_base && s.purpose !== "judge").at(-1);
  const fixing = last?.purpose === "fix_gates" || last?.purpose === "fix_judge";
  if (!last || !fixing || reflections.some((r) => r.iteration === last.iteration)) return undefined;
  const failed = (step.gates ?? []).find((line) => !line.passed && !line.ci);
  if (failed?.output === undefined) return undefined;
  return {
    command: failed.command,
    passed: false,
    output: failed.output,
    durationMs: 0,
    ...(failed.judge ? { judge: failed.judge } : {}),
  };
}
