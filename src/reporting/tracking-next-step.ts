import { choicesAfterStop, type StoppedRun } from "./after-stop.ts";
import { prRef } from "./describe-pr-gate.ts";
import type { TrackingView } from "./tracking-view.ts";
import { cleanAfter, safeUrl } from "./untrusted.ts";
import type { PrGate } from "./views.ts";

/** What Lisa waits for and the commands that apply in the run's state: the comment's last lines. */
export function nextStepBlocks(view: TrackingView, gates: PrGate[]): string[] {
  const blocks: string[] = [];
  const waiting = cleanAfter("", view.waitingFor, { secrets: view.secrets, max: 300 }) || waitingFor(view, gates);
  if (waiting) blocks.push(`**Waiting for:** ${waiting}`, "");
  const commands = commandsFor(view);
  if (commands.length) blocks.push(`**Commands:** ${commands.join(" · ")}`);
  return blocks;
}

/** What Lisa waits for in the run's state, in a few words (the tracking comment and `/lisa status` both say it). */
export function waitingFor(view: TrackingView, gates: PrGate[]): string {
  switch (view.state) {
    case "queued":
      return "a free worker";
    case "running":
      return "the agents and the gates; this comment updates as they progress";
    case "plan_review":
      return "you: `/lisa proceed` builds this plan, `/lisa redirect <guidance>` plans again with your guidance";
    case "blocked":
      return "you: `/lisa fix [notes]`, `/lisa skip` or `/lisa abort` for the blocked steps";
    case "review": {
      const open = gates.filter((gate) => gate.status === "pending" || gate.status === "changes_requested");
      if (open.length === 0 && gates.length === 0) {
        const urls = view.steps.flatMap((step) => safeUrl(step.prUrl) ?? []);
        return urls.length ? `your review of ${urls.join(", ")}` : "your review";
      }
      return `your review: approve ${open.map((gate) => prRef(gate)).join(", ") || "the pull requests"} to accept the pass, or request changes`;
    }
    case "accepted":
      return "the pull requests to be merged";
    case "stopped":
      return `you: ${choicesAfterStop(stoppedRun(view, gates)).join("; ")}`;
    case "failed":
      return "`/lisa retry`";
    default:
      return "";
  }
}

/** The run as `choicesAfterStop` needs it: the pull requests still open are the ones to approve or close. */
export function stoppedRun(view: TrackingView, gates: PrGate[]): StoppedRun {
  const open = gates.filter((gate) => gate.status !== "merged" && gate.status !== "dropped");
  return {
    pass: view.pass,
    maxPasses: view.maxPasses,
    canContinue: view.canContinue,
    openPullRequests: open.map((gate) => prRef(gate)),
  };
}

function commandsFor(view: TrackingView): string[] {
  const passesLeft = view.pass < view.maxPasses;
  // `/lisa continue` does the pass's refinements: without any it only answers that there are none.
  const next = passesLeft ? ["`/lisa redirect <guidance>`", ...(view.canContinue ? ["`/lisa continue`"] : [])] : [];
  const status = ["`/lisa status`", "`/lisa help`"];
  switch (view.state) {
    case "queued":
    case "running":
      return [
        "`/lisa redirect <guidance>` (given to the agent at work, else queued for the next pass)",
        "`/lisa abort`",
        ...status,
      ];
    case "plan_review":
      return ["`/lisa proceed`", "`/lisa redirect <guidance>`", "`/lisa abort`", ...status];
    case "blocked":
      return [
        "`/lisa fix [notes]`",
        "`/lisa skip`",
        "`/lisa abort`",
        ...(passesLeft ? ["`/lisa redirect <guidance>`"] : []),
        ...status,
      ];
    case "review":
      return [...next, "`/lisa accept` (accept without approvals)", ...status, ...limitNote(view)];
    case "accepted":
    case "stopped":
      return [...next, ...status, ...limitNote(view)];
    case "failed":
      return ["`/lisa retry`", ...status];
    default:
      return [];
  }
}

function limitNote(view: TrackingView): string[] {
  return view.pass < view.maxPasses
    ? []
    : [`pass ${view.pass} of ${view.maxPasses} was the last (\`limits.max_passes\`; raise it in \`.github/lisa.yml\`)`];
}
