import { describePrGate, prRef } from "./describe-pr-gate.ts";
import { type Block, fitToLimit } from "./fit-to-limit.ts";
import { formatDuration, mention, money, plural, repoName } from "./format.ts";
import { cleanAfter, cleanBlock, cleanLine, code, fenced, safeUrl } from "./untrusted.ts";
import type { PrGate } from "./views.ts";

/** The hidden marker by which a run's tracking comment is found again. Do not change: existing comments carry it. */
export const trackingMarker = (runId: number) => `<!-- lisa:tracking run=${runId} -->`;

type TrackingSession = {
  iteration: number;
  provider: string;
  model?: string;
  purpose: string;
  state: "running" | "succeeded" | "failed" | "interrupted";
  durationMs?: number;
  costUsd: number;
  turns?: number;
  failureKind?: string;
};

type TrackingStep = {
  position: number;
  repo: string;
  branch: string;
  /** The step's state in the current pass (`running`, `delivered`, `blocked`, …). */
  state: string;
  /** While running: `workspace`, `agent`, `gates`, … */
  phase?: string;
  prUrl?: string;
  scope?: string;
  gate?: PrGate;
  sessions: TrackingSession[];
  blockReason?: string;
  lastGateFailure?: { command: string; output: string };
};

/** The run as the issue's tracking comment shows it (design §5.5). */
export interface TrackingView {
  runId: number;
  state: "queued" | "running" | "plan_review" | "blocked" | "review" | "accepted" | "stopped" | "failed" | "merged" | "closed";
  pass: number;
  maxPasses: number;
  requestedBy: string;
  elapsedMs: number;
  costUsd: number;
  limitUsd: number;
  plan?: { summary?: string; state: "pending" | "running" | "delivered" | "failed" };
  steps: TrackingStep[];
  /** Guidance that will start the next pass when the current one ends. */
  queuedGuidance: { author: string; source: string; excerpt: string }[];
  history: { pass: number; trigger: string; by: string; outcome: string; costUsd: number }[];
  error?: string;
  /** Overrides the "Waiting for" line derived from the state. */
  waitingFor?: string;
  /** What happened to the run that its steps do not show, e.g. a worker lost and its work redone. */
  notices?: string[];
  secrets: readonly string[];
}

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

const PHASE: Record<string, string> = {
  planning: "planning",
  workspace: "preparing the workspace",
  agent: "the agent is working",
  gates: "running the gates",
  commit: "committing",
  reconcile: "taking in human commits",
  push: "pushing",
  pull_request: "opening the pull request",
  package: "writing the review package",
  done: "delivered",
};

const PURPOSE: Record<string, string> = {
  plan: "planning",
  implement: "implementing",
  revise: "revising",
  fix_gates: "fixing gate failures",
  resume: "resuming",
  resolve_conflict: "resolving a conflict",
};

const DONE_STATES = new Set(["delivered", "unchanged", "merged"]);
const MAX_STEPS = 50;
const MAX_SESSIONS = 10;
const MAX_GATE_FAILURES = 3;
const MAX_QUEUED = 20;
const MAX_HISTORY = 20;
const MAX_GATES = 20;
const MAX_NOTICES = 3;

/**
 * Renders the run's tracking comment on the issue: state, pass, steps with their sessions and
 * pull requests, the review gate per pull request, gate failures, queued guidance, the pass
 * history, what Lisa waits for and the commands that apply. Always within GitHub's limit.
 */
export function renderTrackingComment(view: TrackingView): string {
  const { secrets } = view;
  const blocks: (string | Block)[] = [
    trackingMarker(view.runId),
    `### Lisa · pass ${view.pass} · ${HEADLINE[view.state]}`,
    "",
    `Requested by ${mention(view.requestedBy)} · pass ${view.pass} of at most ${view.maxPasses} · elapsed ${formatDuration(view.elapsedMs)} · agent cost ${money(view.costUsd)} of ${money(view.limitUsd)}`,
    "",
  ];

  if (view.plan) blocks.push(planLine(view.plan, view.steps.length, secrets));
  const numbered = view.steps.length > 1;
  for (const step of view.steps.slice(0, MAX_STEPS)) {
    blocks.push({ text: stepLine(step, numbered, secrets), drop: 2 });
    const shown = step.sessions.slice(-MAX_SESSIONS);
    if (step.sessions.length > shown.length) {
      blocks.push({ text: `  - …${plural(step.sessions.length - shown.length, "earlier session")}`, drop: 3 });
    }
    for (const session of shown) blocks.push({ text: sessionLine(session, secrets), drop: 3 });
  }
  if (view.steps.length > MAX_STEPS) {
    blocks.push(`- …and ${plural(view.steps.length - MAX_STEPS, "more step")}; each pull request's comments show its passes`);
  }
  blocks.push("");
  for (const notice of (view.notices ?? []).slice(-MAX_NOTICES)) {
    blocks.push({ text: `> ${cleanLine(notice, { secrets, max: 300 })}`, drop: 2 }, "");
  }

  const gates = view.steps.flatMap((step) => (step.gate ? [step.gate] : []));
  if (gates.length) {
    const more = gates.length > MAX_GATES ? ` · …and ${plural(gates.length - MAX_GATES, "more", "more")}` : "";
    blocks.push(
      `**Review:** ${gates
        .slice(0, MAX_GATES)
        .map((gate) => describePrGate(gate, { withSha: true }))
        .join(" · ")}${more}`,
      "",
    );
  }

  const failures = view.steps.filter((step) => step.lastGateFailure);
  for (const step of failures.slice(0, MAX_GATE_FAILURES)) {
    const failure = step.lastGateFailure;
    if (!failure) continue;
    blocks.push({
      text: [
        `**Gate failure** in ${repoName(step.repo)}: ${code(failure.command, { secrets })}`,
        "",
        fenced(failure.output, { secrets }),
        "",
      ].join("\n"),
      drop: 2,
    });
  }
  if (failures.length > MAX_GATE_FAILURES) {
    blocks.push(`…gate failures in ${plural(failures.length - MAX_GATE_FAILURES, "more step")} are in their pull requests.`, "");
  }

  if (view.error?.trim() || view.state === "failed") {
    blocks.push(
      "**What went wrong:**",
      "",
      cleanBlock(view.error ?? "", { secrets, max: 4_000 }) || "unknown error",
      "",
      "Comment `/lisa retry` to resume at the step that failed (finished steps are kept), or fix the cause first.",
      "",
    );
  }

  if (view.queuedGuidance.length) {
    blocks.push(`**${plural(view.queuedGuidance.length, "request")} queued for pass ${view.pass + 1}**`);
    for (const item of view.queuedGuidance.slice(0, MAX_QUEUED)) {
      const source = cleanLine(item.source, { secrets, max: 30 });
      blocks.push({
        text: `- ${mention(item.author)} (${source}): "${cleanLine(item.excerpt, { secrets, max: 200 })}"`,
        drop: 1,
      });
    }
    if (view.queuedGuidance.length > MAX_QUEUED)
      blocks.push(`- …and ${plural(view.queuedGuidance.length - MAX_QUEUED, "more", "more")}`);
    blocks.push("");
  }

  if (view.history.length) {
    blocks.push("**Passes**");
    const shown = view.history.slice(-MAX_HISTORY);
    if (view.history.length > shown.length)
      blocks.push(`- …${plural(view.history.length - shown.length, "earlier pass", "earlier passes")}`);
    for (const entry of shown) {
      const trigger = cleanLine(entry.trigger, { secrets, max: 40 });
      const outcome = cleanLine(entry.outcome, { secrets, max: 60 });
      blocks.push({
        text: `- Pass ${entry.pass} · ${trigger} by ${mention(entry.by)} · ${outcome} · ${money(entry.costUsd)}`,
        drop: 1,
      });
    }
    blocks.push("");
  }

  const waiting = cleanAfter("", view.waitingFor, { secrets, max: 300 }) || waitingFor(view, gates);
  if (waiting) blocks.push(`**Waiting for:** ${waiting}`, "");
  const commands = commandsFor(view);
  if (commands.length) blocks.push(`**Commands:** ${commands.join(" · ")}`);
  return fitToLimit(blocks).trimEnd();
}

function planLine(plan: NonNullable<TrackingView["plan"]>, steps: number, secrets: readonly string[]): string {
  const summary = cleanAfter(" — ", plan.summary, { secrets, max: 160 });
  switch (plan.state) {
    case "delivered":
      return `- [x] Plan: ${plural(steps, "step")}${summary}`;
    case "running":
      return `- [ ] Plan — planning${summary}`;
    case "failed":
      return `- [ ] Plan — failed${summary}`;
    default:
      return "- [ ] Plan — waiting";
  }
}

function stepLine(step: TrackingStep, numbered: boolean, secrets: readonly string[]): string {
  const mark = DONE_STATES.has(step.state) ? "[x]" : "[ ]";
  const number = numbered ? `${step.position}. ` : "";
  const state =
    step.state === "running"
      ? (PHASE[step.phase ?? ""] ?? (step.phase ? cleanLine(step.phase, { secrets, max: 40 }) : "running"))
      : step.state === "blocked"
        ? `⛔ blocked${cleanAfter(": ", step.blockReason, { secrets, max: 200 })}`
        : step.state === "failed"
          ? "❌ failed"
          : cleanLine(step.state, { secrets, max: 40 });
  const url = safeUrl(step.prUrl);
  const pr = url ? ` — pull request: ${url}` : "";
  const scope = numbered ? cleanAfter(" — ", step.scope, { secrets, max: 160 }) : "";
  return `- ${mark} ${number}${code(step.repo, { secrets })} on ${code(step.branch, { secrets })} — ${state}${pr}${scope}`;
}

function sessionLine(session: TrackingSession, secrets: readonly string[]): string {
  const mark = session.state === "succeeded" ? "✅" : session.state === "running" ? "⏳" : "❌";
  const provider = cleanLine(session.provider, { secrets, max: 40 });
  const model = session.model ? ` (${cleanLine(session.model, { secrets, max: 60 })})` : "";
  const purpose = PURPOSE[session.purpose] ?? cleanLine(session.purpose, { secrets, max: 40 });
  const took = session.durationMs === undefined ? "" : ` · ${formatDuration(session.durationMs)}`;
  const detail =
    session.state === "running" ? "" : `${took} · ${money(session.costUsd)}${session.turns ? ` · ${session.turns} turns` : ""}`;
  const why = session.failureKind
    ? ` · ${cleanLine(session.failureKind, { secrets, max: 60 })}`
    : session.state === "interrupted"
      ? " · interrupted"
      : "";
  return `  - ${mark} Agent session ${session.iteration}: ${provider}${model}, ${purpose}${detail}${why}`;
}

function waitingFor(view: TrackingView, gates: PrGate[]): string {
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
      return `\`/lisa redirect <guidance>\` or \`/lisa continue\` to start pass ${view.pass + 1}; closing the pull requests ends the run`;
    case "failed":
      return "`/lisa retry`";
    default:
      return "";
  }
}

function commandsFor(view: TrackingView): string[] {
  const passesLeft = view.pass < view.maxPasses;
  const next = passesLeft ? ["`/lisa redirect <guidance>`", "`/lisa continue`"] : [];
  const status = ["`/lisa status`", "`/lisa help`"];
  switch (view.state) {
    case "queued":
    case "running":
      return ["`/lisa redirect <guidance>` (queued for the next pass)", "`/lisa abort`", ...status];
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
