import type { CheckReport } from "../github/github-port.ts";
import { describeGates } from "./describe-gate.ts";
import { shortSha } from "./format.ts";
import { cleanLine } from "./untrusted.ts";
import type { GateLine } from "./views.ts";

/** The name of Lisa's check run on the heads she pushes, as the merge box shows it. */
export const CHECK_NAME = "Lisa";

export interface CheckView {
  issueRef: string;
  pass: number;
  headSha: string;
  gates: GateLine[];
  /** The tracking comment, where the run's whole story is. */
  trackingUrl: string | undefined;
  secrets: readonly string[];
}

const gatesLine = (view: CheckView) =>
  view.gates.length === 0
    ? "No gates are configured."
    : `Gates at this head: ${describeGates(view.gates, view.pass, view.secrets)}`;

const trackingLine = (view: CheckView) =>
  view.trackingUrl ? `\n\nThe run's progress: [tracking comment](${view.trackingUrl}).` : "";

/** A head pushed while later steps of the plan are still to be built. */
export function checkInProgress(view: CheckView): CheckReport {
  return {
    title: "Waiting for the rest of the plan",
    summary: `Pass ${view.pass} of ${view.issueRef} pushed \`${shortSha(view.headSha)}\`; Lisa is building the plan's other steps, then asks for review.\n\n${gatesLine(view)}${trackingLine(view)}`,
    ...(view.trackingUrl ? { detailsUrl: view.trackingUrl } : {}),
  };
}

/** The pass is at the review gate: its gates passed at this head, and the package is on the pull request. */
export function checkReady(view: CheckView): CheckReport {
  return {
    conclusion: "success",
    title: "Ready for review",
    summary: `Pass ${view.pass} of ${view.issueRef} is ready for review at \`${shortSha(view.headSha)}\`; its review package is on this pull request.\n\n${gatesLine(view)}${trackingLine(view)}`,
    ...(view.trackingUrl ? { detailsUrl: view.trackingUrl } : {}),
  };
}

/** The run ended before the gate: it failed (`failure`), or a human stopped it (`cancelled`). */
export function checkEnded(view: CheckView, conclusion: "failure" | "cancelled", reason: string): CheckReport {
  return {
    conclusion,
    title: conclusion === "failure" ? "The run failed" : "The run was stopped",
    summary: `${cleanLine(reason, { secrets: view.secrets, max: 1000 })}\n\nPass ${view.pass} of ${view.issueRef} did not reach review.${trackingLine(view)}`,
    ...(view.trackingUrl ? { detailsUrl: view.trackingUrl } : {}),
  };
}
