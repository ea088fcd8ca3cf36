import { approvalsWanted, prRef } from "./describe-pr-gate.ts";
import { mention, repoName, shortSha } from "./format.ts";
import { STATE_WORDS } from "./state-words.ts";
import { waitingFor } from "./tracking-next-step.ts";
import { PHASE } from "./tracking-steps.ts";
import type { TrackingStep, TrackingView } from "./tracking-view.ts";
import { cleanAfter, cleanLine, link } from "./untrusted.ts";
import type { PrGate } from "./views.ts";

const MAX_STEPS = 20;

/**
 * The answer to `/lisa status`, one short comment: the run's state in words, the pass and its
 * limit, each pull request's gate with what it still needs, what Lisa waits for, and a link to the
 * tracking comment, which has the rest.
 */
export function renderStatusReply(view: TrackingView, trackingUrl: string | undefined): string {
  const tracking = link("tracking comment", trackingUrl);
  const lines = [
    `**Run ${view.runId} is ${STATE_WORDS[view.state]}** · pass ${view.pass} of at most ${view.maxPasses}${tracking ? ` · details in the ${tracking}` : ""}`,
    "",
  ];
  const steps = view.steps.slice(0, MAX_STEPS);
  for (const step of steps) lines.push(`- ${stepStatus(step, view)}`);
  if (view.steps.length > steps.length) lines.push(`- …and ${view.steps.length - steps.length} more in the tracking comment`);
  if (steps.length) lines.push("");
  const gates = view.steps.flatMap((step) => (step.gate ? [step.gate] : []));
  const waiting = view.state === "running" ? agentAt(view) : "";
  const next = waiting || cleanAfter("", view.waitingFor, { secrets: view.secrets, max: 300 }) || waitingFor(view, gates);
  lines.push(`**Waiting for:** ${next || "nothing: the run has ended"}`);
  return lines.join("\n");
}

/** One step: its pull request's gate and what it still needs, or where the step stands without one. */
function stepStatus(step: TrackingStep, view: TrackingView): string {
  const state =
    step.state === "running"
      ? (PHASE[step.phase ?? ""] ?? "working")
      : step.state === "blocked"
        ? `⛔ blocked${cleanAfter(": ", step.blockReason, { secrets: view.secrets, max: 200 })}`
        : cleanLine(step.state, { secrets: view.secrets, max: 40 });
  if (!step.gate) return `${repoName(step.repo)}: no pull request yet · ${state}`;
  // A pull request the current pass still works on: its gate, and what the pass is doing to it.
  const busy = step.state === "running" || step.state === "blocked" || step.state === "pending";
  return `${prRef(step.gate)} ${gateStatus(step.gate)}${busy ? ` · pass ${view.pass}: ${state}` : ""}`;
}

/** `✅ approved by @ann at 1a2b3c4`, or what the pull request still needs before the gate can accept it. */
export function gateStatus(gate: PrGate): string {
  const names = (logins: string[]) => logins.map(mention).join(", ");
  const at = gate.headSha ? ` at ${shortSha(gate.headSha)}` : "";
  switch (gate.status) {
    case "approved":
      return `✅ approved by ${names(gate.approvers)}${at}`;
    case "changes_requested":
      return `❌ changes requested by ${names(gate.blockers)}; needs ${gate.blockers.length === 1 ? "their" : "each one's"} approval, or the review dismissed`;
    case "merged":
      return "🔀 merged";
    case "dropped":
      return "🚪 closed without merging: no longer part of the review";
    default:
      break;
  }
  if (gate.approvers.length) {
    // Lisa's rule is met; GitHub's own (required approvals, code owners) is not yet.
    return `⏳ approved by ${names(gate.approvers)}${at}; GitHub's review rule ${gate.githubDecision === "CHANGES_REQUESTED" ? "still needs a change request resolved" : approvalsWanted(gate)}`;
  }
  const stale = gate.stale?.length ? ` (${names(gate.stale)} approved an earlier head)` : "";
  return `⏳ needs an approval${at} from someone with write access${stale}`;
}

/** The step the agents work on now, and what it is doing. */
function agentAt(view: TrackingView): string {
  const step = view.steps.find((s) => s.state === "running");
  if (!step) return view.plan?.state === "running" ? "the planner to fix the plan" : "";
  const doing = PHASE[step.phase ?? ""] ?? "working";
  return `step ${step.position} on ${repoName(step.repo)}: ${doing}`;
}
