import { describePrGate } from "./describe-pr-gate.ts";
import { type Block, fitToLimit } from "./fit-to-limit.ts";
import { formatDuration, mention, money, plural } from "./format.ts";
import { failureBlocks } from "./tracking-failures.ts";
import { nextStepBlocks } from "./tracking-next-step.ts";
import { passHistoryBlocks, queuedGuidanceBlocks } from "./tracking-passes.ts";
import { stepBlocks } from "./tracking-steps.ts";
import type { TrackingView } from "./tracking-view.ts";
import { cleanLine, code } from "./untrusted.ts";
import type { PrGate } from "./views.ts";

export type { TrackingView } from "./tracking-view.ts";

/** The hidden marker by which a run's tracking comment is found again. Do not change: existing comments carry it. */
export const trackingMarker = (runId: number) => `<!-- lisa:tracking run=${runId} -->`;

export const HEADLINE: Record<TrackingView["state"], string> = {
  queued: "⏳ Queued",
  running: "🔧 Working",
  plan_review: "📋 Plan ready for review",
  blocked: "⛔ Blocked",
  review: "👀 Ready for review",
  accepted: "✅ Accepted",
  stopped: "⏹️ Stopped",
  failed: "❌ Failed",
  merged: "🔀 Merged",
  closed: "🚪 Closed",
};

const MAX_GATES = 20;
const MAX_NOTICES = 3;

/**
 * Renders the run's tracking comment on the issue: state, pass, steps with their sessions and
 * pull requests, the review gate per pull request, gate failures, queued guidance, the pass
 * history, what Lisa waits for and the commands that apply. Always within GitHub's limit.
 */
export function renderTrackingComment(view: TrackingView): string {
  const { secrets } = view;
  const gates = view.steps.flatMap((step) => (step.gate ? [step.gate] : []));
  const blocks: (string | Block)[] = [
    trackingMarker(view.runId),
    `### Lisa · pass ${view.pass} · ${HEADLINE[view.state]}`,
    "",
    `Requested by ${mention(view.requestedBy)} · pass ${view.pass} of at most ${view.maxPasses} · elapsed ${formatDuration(view.elapsedMs)} · agent cost ${money(view.costUsd)} of ${money(view.limitUsd)}${view.judgeUsd ? ` (judges ${money(view.judgeUsd)})` : ""}`,
    "",
    ...stepBlocks(view),
  ];
  for (const notice of (view.notices ?? []).slice(-MAX_NOTICES)) {
    blocks.push({ text: `> ${cleanLine(notice, { secrets, max: 300 })}`, drop: 2 }, "");
  }
  if (view.withdrawn) {
    const { actor, what } = view.withdrawn;
    const by = actor && what ? `: ${mention(actor)} ${cleanLine(what, { secrets, max: 200 })}` : "";
    blocks.push(`> ⚠️ Acceptance withdrawn${by}. The pull requests wait for approval again.`, "");
  }
  for (const push of (view.humanPushes ?? []).slice(-MAX_NOTICES)) {
    const range = code(push.range, { secrets, max: 40 });
    const pr = cleanLine(push.pr, { secrets, max: 120 });
    blocks.push(
      {
        text: `> Since pass ${view.pass}: ${mention(push.actor)} pushed ${range} to ${pr}; the next pass builds on it.`,
        drop: 2,
      },
      "",
    );
  }
  if (gates.length) blocks.push(reviewLine(gates), "");
  blocks.push(...failureBlocks(view), ...queuedGuidanceBlocks(view), ...passHistoryBlocks(view), ...nextStepBlocks(view, gates));
  return fitToLimit(blocks).trimEnd();
}

/** `**Review:** acme/api#5 ✅ @ann at 1a2b3c4 · acme/web#7 ⏳ waiting`, one gate per pull request of the run. */
function reviewLine(gates: PrGate[]): string {
  const shown = gates.slice(0, MAX_GATES).map((gate) => describePrGate(gate, { withSha: true }));
  const more = gates.length > MAX_GATES ? ` · …and ${plural(gates.length - MAX_GATES, "more", "more")}` : "";
  return `**Review:** ${shown.join(" · ")}${more}`;
}
