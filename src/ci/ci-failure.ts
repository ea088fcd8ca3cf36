import { createHash } from "node:crypto";
import { z } from "zod";
import type { StepRow } from "../store/store.ts";

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

const CI_GATE = "CI: ";

/** The gate a reflection on a CI failure is recorded under, e.g. `CI: html-lint`. */
export const ciGateName = (names: readonly string[]): string => `${CI_GATE}${names.join(", ")}`;

/** Whether a reflection's gate is a CI failure's (ciGateName) rather than a gate command's. */
export const isCiGate = (gate: string): boolean => gate.startsWith(CI_GATE);

/** The checks a CI reflection's gate names; one whose own name holds ", " only loses its "fixed" mark. */
export const ciChecksOf = (gate: string): string[] => (isCiGate(gate) ? gate.slice(CI_GATE.length).split(", ") : []);

/** describeCiFailures' signature, hashed short as gate failures' are (reflection.ts). */
export const ciSignature = (raw: string): string => createHash("sha256").update(raw).digest("hex").slice(0, 16);

/** The step's CI failure still waiting for a fix session in `pass` and the step's current try. */
export function pendingCiFailure(step: Pick<StepRow, "ci_failure" | "iteration_base">, pass: number): CiFailure | undefined {
  if (!step.ci_failure) return undefined;
  const kept = ciFailureSchema.safeParse(JSON.parse(step.ci_failure));
  if (!kept.success || kept.data.pass !== pass || kept.data.base !== step.iteration_base) return undefined;
  return kept.data;
}
