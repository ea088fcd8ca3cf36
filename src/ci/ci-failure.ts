import { createHash } from "node:crypto";
import type { CiFailure } from "../records/columns.ts";
import type { StepRow } from "../store/store.ts";

export type { CiFailure } from "../records/columns.ts";

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
  const kept = step.ci_failure;
  if (!kept || kept.pass !== pass || kept.base !== step.iteration_base) return undefined;
  return kept;
}
