import type { RunRow, SessionRow, StepRow } from "../runs/store.ts";

/** The hidden marker by which a run's tracking comment is found again. */
export const trackingMarker = (runId: number) => `<!-- lisa:tracking run=${runId} -->`;

const PHASE_LABEL: Record<StepRow["phase"], string> = {
  workspace: "preparing the workspace",
  agent: "the agent is working",
  gates: "running the gates",
  commit: "committing",
  push: "pushing",
  pull_request: "opening the pull request",
  done: "delivered",
};

function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h ? `${h}h ${m}m` : m ? `${m}m ${s}s` : `${s}s`;
}

const money = (usd: number) => `$${usd.toFixed(2)}`;

function sessionLine(session: SessionRow): string {
  const mark = session.state === "succeeded" ? "✅" : session.state === "running" ? "⏳" : "❌";
  const purpose =
    session.purpose === "fix_gates" ? "fixing gate failures" : session.purpose === "resume" ? "resuming" : "implementing";
  const model = session.model ? ` (${session.model})` : "";
  const took = session.finished_at === null ? "" : ` · ${formatDuration(session.finished_at - session.started_at)}`;
  const detail =
    session.state === "running" ? "" : `${took} · ${money(session.cost_usd)}${session.turns ? ` · ${session.turns} turns` : ""}`;
  const why = session.failure_kind ? ` · ${session.failure_kind}` : session.state === "interrupted" ? " · interrupted" : "";
  return `  - ${mark} Agent session ${session.iteration}: ${session.provider}${model}, ${purpose}${detail}${why}`;
}

export interface TrackingView {
  run: RunRow;
  steps: { step: StepRow; sessions: SessionRow[] }[];
  costUsd: number;
  now: number;
}

/** Renders the tracking comment: state, steps with their sessions, PR links, time, cost and what Lisa waits for. */
export function renderTrackingComment({ run, steps, costUsd, now }: TrackingView): string {
  const elapsed = formatDuration((run.finished_at ?? now) - run.created_at);
  const headline = {
    queued: "⏳ Queued",
    running: "🔧 Working",
    review: "👀 Ready for review",
    failed: "❌ Failed",
  }[run.state];
  const lines = [
    trackingMarker(run.id),
    `### Lisa · ${headline}`,
    "",
    `Requested by @${run.requested_by} · elapsed ${elapsed} · agent cost ${money(costUsd)}`,
    "",
  ];
  for (const { step, sessions } of steps) {
    const mark = step.state === "delivered" ? "[x]" : "[ ]";
    const where = `\`${step.owner}/${step.repo}\` on \`${step.branch}\``;
    const status = step.state === "running" ? ` — ${PHASE_LABEL[step.phase]}` : step.state === "failed" ? " — failed" : "";
    const pr = step.pr_url ? ` — pull request: ${step.pr_url}` : "";
    lines.push(`- ${mark} ${where}${status}${pr}`);
    lines.push(...sessions.map(sessionLine));
  }
  lines.push("");
  if (run.state === "failed") {
    lines.push(
      `**What went wrong:** ${run.error ?? "unknown error"}`,
      "",
      "Fix the cause and label the issue again to start a new run.",
    );
  } else if (run.state === "review") {
    const prs = steps.map(({ step }) => step.pr_url).filter(Boolean);
    lines.push(`**Waiting for:** your review of ${prs.join(", ")}`);
  } else {
    lines.push(
      `**Waiting for:** ${run.state === "queued" ? "a free worker" : "the agent and the gates; this comment updates as they progress"}`,
    );
  }
  return lines.join("\n");
}
