import { sanitizeMarkdown } from "../markdown/sanitize-markdown.ts";
import { fitBody, formatDuration, gateLine, mention, money, oneLine } from "./format.ts";
import type { PrGate } from "./views.ts";

/** The hidden marker by which a run's tracking comment is found again. */
export const trackingMarker = (runId: number) => `<!-- lisa:tracking run=${runId} -->`;

export interface TrackingView {
  runId: number;
  state: "queued" | "running" | "blocked" | "review" | "accepted" | "stopped" | "failed" | "merged" | "closed";
  pass: number;
  maxPasses: number;
  requestedBy: string;
  elapsedMs: number;
  costUsd: number;
  limitUsd: number;
  plan?: { summary?: string; state: "pending" | "running" | "delivered" | "failed" } | undefined;
  steps: {
    position: number;
    repo: string;
    branch: string;
    state: string;
    phase?: string;
    prUrl?: string;
    scope?: string;
    gate?: PrGate;
    sessions: {
      iteration: number;
      provider: string;
      model?: string;
      purpose: string;
      state: "running" | "succeeded" | "failed" | "interrupted";
      durationMs?: number;
      costUsd: number;
      turns?: number;
      failureKind?: string;
    }[];
    blockReason?: string;
  }[];
  queuedGuidance: { author: string; source: string; excerpt: string }[];
  history: { pass: number; trigger: string; by: string; outcome: string; costUsd: number }[];
  error?: string;
  secrets: string[];
}

const HEADLINE: Record<TrackingView["state"], string> = {
  queued: "⏳ Queued",
  running: "🔧 Working",
  blocked: "⛔ Blocked",
  review: "👀 Ready for review",
  accepted: "✅ Accepted",
  stopped: "⏹️ Stopped",
  failed: "❌ Failed",
  merged: "🔀 Merged",
  closed: "🚪 Closed",
};

const PHASE_LABEL: Record<string, string> = {
  planning: "planning",
  workspace: "preparing the workspace",
  agent: "the agent is working",
  gates: "running the gates",
  commit: "committing",
  push: "pushing",
  pull_request: "updating the pull request",
  done: "delivered",
};

const PURPOSE: Record<string, string> = {
  plan: "planning",
  implement: "implementing",
  fix_gates: "fixing gate failures",
  resume: "resuming",
  revise: "revising",
};

const MAX_STEPS_SHOWN = 50;

function sessionLine(session: TrackingView["steps"][number]["sessions"][number]): string {
  const mark = session.state === "succeeded" ? "✅" : session.state === "running" ? "⏳" : "❌";
  const model = session.model ? ` (${session.model})` : "";
  const took = session.durationMs === undefined ? "" : ` · ${formatDuration(session.durationMs)}`;
  const detail =
    session.state === "running" ? "" : `${took} · ${money(session.costUsd)}${session.turns ? ` · ${session.turns} turns` : ""}`;
  const why = session.failureKind ? ` · ${session.failureKind}` : session.state === "interrupted" ? " · interrupted" : "";
  return `  - ${mark} Agent session ${session.iteration}: ${session.provider}${model}, ${PURPOSE[session.purpose] ?? session.purpose}${detail}${why}`;
}

/** Renders the tracking comment: state and pass, steps with sessions and PR gates, queued guidance, history, and what Lisa waits for. */
export function renderTrackingComment(view: TrackingView): string {
  const lines = [
    trackingMarker(view.runId),
    `### Lisa · pass ${view.pass} · ${HEADLINE[view.state]}`,
    "",
    `Requested by ${mention(view.requestedBy)} · elapsed ${formatDuration(view.elapsedMs)} · agent cost ${money(view.costUsd)} of ${money(view.limitUsd)}`,
    "",
  ];
  const planned = view.steps.length;
  if (view.plan) {
    const mark = view.plan.state === "delivered" ? "[x]" : "[ ]";
    const status = view.plan.state === "running" ? " — planning" : view.plan.state === "failed" ? " — failed" : "";
    const outcome = view.plan.state === "delivered" ? `: ${planned} step${planned === 1 ? "" : "s"}` : "";
    lines.push(
      `- ${mark} Plan${outcome}${status}${view.plan.summary ? ` — ${oneLine(view.plan.summary, view.secrets, 160)}` : ""}`,
    );
  }
  for (const step of view.steps.slice(0, MAX_STEPS_SHOWN)) {
    const done = ["delivered", "unchanged"].includes(step.state);
    const status =
      step.state === "running"
        ? ` — ${PHASE_LABEL[step.phase ?? ""] ?? step.phase}`
        : ["failed", "blocked", "skipped", "dropped", "unchanged"].includes(step.state)
          ? ` — ${step.state}`
          : "";
    const number = planned > 1 || view.plan ? `${step.position}. ` : "";
    const scope = step.scope && view.plan ? ` — ${oneLine(step.scope, view.secrets, 160)}` : "";
    const pr = step.prUrl ? ` — pull request: ${step.prUrl}` : "";
    lines.push(`- ${done ? "[x]" : "[ ]"} ${number}\`${step.repo}\` on \`${step.branch}\`${status}${pr}${scope}`);
    if (step.blockReason) lines.push(`  - ⛔ ${oneLine(step.blockReason, view.secrets, 400)}`);
    lines.push(...step.sessions.slice(-20).map(sessionLine));
  }
  if (view.steps.length > MAX_STEPS_SHOWN) lines.push(`- …and ${view.steps.length - MAX_STEPS_SHOWN} more steps`);
  lines.push("");
  const gates = view.steps.flatMap((s) => (s.gate ? [s.gate] : []));
  if (gates.length) lines.push(`**Review:** ${gates.map(gateLine).join(" · ")}`, "");
  if (view.queuedGuidance.length) {
    const n = view.queuedGuidance.length;
    lines.push(
      `**${n} request${n === 1 ? "" : "s"} queued for pass ${view.pass + 1}:** ${view.queuedGuidance.map((g) => `${mention(g.author)} (${g.source})`).join(", ")}`,
      "",
    );
  }
  if (view.history.length > 1) {
    lines.push(
      "**Passes**",
      ...view.history.map((h) => `- Pass ${h.pass}: ${h.trigger} by ${mention(h.by)} · ${h.outcome} · ${money(h.costUsd)}`),
      "",
    );
  }
  lines.push(waitingFor(view, gates));
  return fitBody(lines.join("\n"));
}

function waitingFor(view: TrackingView, gates: PrGate[]): string {
  switch (view.state) {
    case "failed":
      return [
        `**What went wrong:** ${sanitizeMarkdown(view.error ?? "unknown error", { minHeadingDepth: 4, secrets: view.secrets, maxLength: 8_000 })}`,
        "",
        "Comment `/lisa retry` to resume at the step that failed (finished steps are kept), or fix the cause first.",
      ].join("\n");
    case "blocked":
      return "**Waiting for:** you. Each blocked step's pull request has a package saying why. `/lisa fix [notes]` tries again with a fresh budget, `/lisa skip` goes on to review without it, `/lisa abort` stops.";
    case "review": {
      const open = gates.filter((g) => g.status === "pending" || g.status === "changes_requested");
      return `**Waiting for:** your review of ${open.map((g) => g.url).join(", ") || "the pull requests"}. Approve to accept; request changes or \`/lisa redirect <what to change>\` for pass ${view.pass + 1} (of at most ${view.maxPasses}).`;
    }
    case "accepted":
      return "**Accepted.** The pull requests are ready to merge; a later change request or `/lisa redirect` starts another pass.";
    case "stopped":
      return `**Stopped.** \`/lisa continue\` or \`/lisa redirect <what to change>\` starts pass ${view.pass + 1}; closing the pull requests ends the run.`;
    case "merged":
      return "**Done:** every pull request is merged.";
    case "closed":
      return "**Closed:** every pull request was closed without merging.";
    case "queued":
      return "**Waiting for:** a free worker.";
    default:
      return "**Waiting for:** the agent and the gates; this comment updates as they progress.";
  }
}
