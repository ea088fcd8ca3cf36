import { sanitizeMarkdown } from "../markdown/sanitize-markdown.ts";
import type { RunRow, SessionRow, StepRow } from "../runs/store.ts";

/** The hidden marker by which a run's tracking comment is found again. */
export const trackingMarker = (runId: number) => `<!-- lisa:tracking run=${runId} -->`;

const PHASE_LABEL: Record<StepRow["phase"], string> = {
  planning: "planning",
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

/** Agent-written text, sanitized (no HTML, no secrets) and shortened to one line for a checklist entry. */
function oneLine(text: string, max = 160): string {
  const flat = sanitizeMarkdown(text).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function sessionLine(session: SessionRow): string {
  const mark = session.state === "succeeded" ? "✅" : session.state === "running" ? "⏳" : "❌";
  const purpose = { plan: "planning", implement: "implementing", fix_gates: "fixing gate failures", resume: "resuming" }[
    session.purpose
  ];
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
  const planned = steps.filter(({ step }) => step.position > 0).length;
  for (const { step, sessions } of steps) {
    const mark = step.state === "delivered" ? "[x]" : "[ ]";
    const status = step.state === "running" ? ` — ${PHASE_LABEL[step.phase]}` : step.state === "failed" ? " — failed" : "";
    if (step.position === 0) {
      const outcome = step.state === "delivered" ? `: ${planned} step${planned === 1 ? "" : "s"}` : "";
      lines.push(`- ${mark} Plan${outcome}${status}${step.summary ? ` — ${oneLine(step.summary)}` : ""}`);
    } else {
      // In a plan each step is numbered and says what it is for; a lone step needs neither.
      const number = planned > 1 || steps.length > 1 ? `${step.position}. ` : "";
      const scope = step.scope && steps.length > 1 ? ` — ${oneLine(step.scope)}` : "";
      const pr = step.pr_url ? ` — pull request: ${step.pr_url}` : "";
      lines.push(`- ${mark} ${number}\`${step.owner}/${step.repo}\` on \`${step.branch}\`${status}${pr}${scope}`);
    }
    lines.push(...sessions.map(sessionLine));
  }
  lines.push("");
  if (run.state === "failed") {
    lines.push(
      `**What went wrong:** ${sanitizeMarkdown(run.error ?? "unknown error", { minHeadingDepth: 4 })}`,
      "",
      "Comment `/lisa retry` to resume at the step that failed (finished steps are kept), or fix the cause first.",
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
