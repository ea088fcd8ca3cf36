import type { Block } from "./fit-to-limit.ts";
import { formatDuration, mention, money, plural } from "./format.ts";
import type { TrackingSession, TrackingStep, TrackingView } from "./tracking-view.ts";
import { cleanAfter, cleanLine, code, safeUrl } from "./untrusted.ts";

export const PHASE: Record<string, string> = {
  planning: "planning",
  workspace: "preparing the workspace",
  agent: "the agent is working",
  gates: "running the gates",
  commit: "committing",
  reconcile: "taking in human commits",
  push: "pushing",
  pull_request: "opening the pull request",
  ci: "waiting for the pull request's CI",
  package: "writing the review package",
  done: "delivered",
};

export const PURPOSE: Record<string, string> = {
  plan: "planning",
  implement: "implementing",
  revise: "revising",
  fix_gates: "fixing gate failures",
  fix_judge: "answering a judge's FAIL",
  judge: "judging",
  fix_ci: "fixing the pull request's CI",
  resume: "resuming",
  resolve_conflict: "resolving a conflict",
};

const DONE_STATES = new Set(["delivered", "unchanged", "merged"]);
const MAX_STEPS = 50;
const MAX_SESSIONS = 10;

/** The plan as a checklist: the plan line, then each step with its pull request and its latest agent sessions. */
export function stepBlocks(view: TrackingView): (string | Block)[] {
  const { secrets } = view;
  const blocks: (string | Block)[] = [];
  if (view.plan) blocks.push(planLine(view.plan, view.steps.length, secrets));
  const numbered = view.steps.length > 1;
  for (const step of view.steps.slice(0, MAX_STEPS)) {
    blocks.push({ text: stepLine(step, numbered, secrets, view.state === "queued"), drop: 2 });
    const shown = step.sessions.slice(-MAX_SESSIONS);
    if (step.sessions.length > shown.length) {
      blocks.push({ text: `  - …${plural(step.sessions.length - shown.length, "earlier session")}`, drop: 3 });
    }
    // A session running on an open pull request is followed live by the "Lisa" check run (workflow/session/live-check.ts).
    const checks = safeUrl(step.prUrl) ? `${step.prUrl}/checks` : undefined;
    for (const session of shown) blocks.push({ text: sessionLine(session, secrets, checks), drop: 3 });
  }
  if (view.steps.length > MAX_STEPS) {
    blocks.push(`- …and ${plural(view.steps.length - MAX_STEPS, "more step")}; each pull request's comments show its passes`);
  }
  blocks.push("");
  return blocks;
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

function stepLine(step: TrackingStep, numbered: boolean, secrets: readonly string[], runQueued: boolean): string {
  // Done is delivered and not sent back: a change request on its PR unticks it.
  const mark = DONE_STATES.has(step.state) && step.gate?.status !== "changes_requested" ? "[x]" : "[ ]";
  // "Step 1:", not "1.": after a task box, "1." starts a numbered list inside the item.
  const number = numbered ? `Step ${step.position}: ` : "";
  // A step of a run handed back is still running in the store, but nothing works on it until it resumes.
  const state =
    step.state === "running" && runQueued
      ? "⏸️ interrupted; resumes where it stood"
      : step.state === "running"
        ? (PHASE[step.phase ?? ""] ?? (step.phase ? cleanLine(step.phase, { secrets, max: 40 }) : "running"))
        : step.state === "blocked"
          ? `⛔ blocked${cleanAfter(": ", step.blockReason, { secrets, max: 200 })}`
          : step.state === "failed"
            ? "❌ failed"
            : step.state === "skipped" && step.sessions.at(-1)?.state === "stopped"
              ? "⏹️ stopped"
              : cleanLine(step.state, { secrets, max: 40 });
  const url = safeUrl(step.prUrl);
  const pr = url ? ` — pull request: ${url}` : "";
  // A blocked attempt is kept on the WIP branch; the step's own branch holds the last head that passed.
  const wipUrl = safeUrl(step.wip?.url);
  const wip = step.wip ? ` — its attempt: ${code(step.wip.ref, { secrets })}${wipUrl ? ` (${wipUrl})` : ""}` : "";
  const scope = numbered ? cleanAfter(" — ", step.scope, { secrets, max: 160 }) : "";
  return `- ${mark} ${number}${code(step.repo, { secrets })} on ${code(step.branch, { secrets })} — ${state}${pr}${wip}${scope}`;
}

/** An interrupted session did not fail: its work stands, and the step resumes from it. */
const SESSION_MARK: Record<string, string> = { succeeded: "✅", running: "⏳", stopped: "⏹️", interrupted: "⏸️" };

function sessionLine(session: TrackingSession, secrets: readonly string[], checks: string | undefined): string {
  const mark = SESSION_MARK[session.state] ?? "❌";
  const provider = cleanLine(session.provider, { secrets, max: 40 });
  const model = session.model ? ` (${cleanLine(session.model, { secrets, max: 60 })})` : "";
  const purpose = PURPOSE[session.purpose] ?? cleanLine(session.purpose, { secrets, max: 40 });
  const took = session.durationMs === undefined ? "" : ` · ${formatDuration(session.durationMs)}`;
  const detail =
    session.state === "running"
      ? checks
        ? ` · [watch it live](${checks})`
        : ""
      : `${took} · ${money(session.costUsd)}${session.turns ? ` · ${session.turns} turns` : ""}`;
  const why =
    session.state === "stopped"
      ? ` · ${stoppedBy(session.stoppedBy, secrets)}`
      : session.failureKind
        ? ` · ${cleanLine(session.failureKind, { secrets, max: 60 })}`
        : session.state === "interrupted"
          ? " · interrupted"
          : "";
  const who = session.purpose === "judge" ? "Judge" : "Agent";
  return `  - ${mark} ${who} session ${session.iteration}: ${provider}${model}, ${purpose}${detail}${why}`;
}

/** `stopped by @ann (\`/lisa abort\`)`: a person ended the session, which is not the agent failing. */
function stoppedBy(by: TrackingSession["stoppedBy"], secrets: readonly string[]): string {
  if (!by) return "stopped";
  const how = cleanAfter("", by.how, { secrets, max: 80 });
  return `stopped by ${mention(by.actor)}${how ? ` (${how})` : ""}`;
}
