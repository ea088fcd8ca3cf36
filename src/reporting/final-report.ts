import { describeCommit } from "./describe-commit.ts";
import { describeGates } from "./describe-gate.ts";
import { describeGuidance } from "./describe-guidance.ts";
import { prRef } from "./describe-pr-gate.ts";
import { type Block, fitToLimit } from "./fit-to-limit.ts";
import { formatDuration, mention, money, plural, shortSha } from "./format.ts";
import { cleanAfter, cleanBlock, cleanLine, code, link, quote, safeUrl } from "./untrusted.ts";
import type { CommitView, GateLine, GuidanceView, PrGate } from "./views.ts";

/** The hidden marker by which a run's final report is found again. */
export const reportMarker = (runId: number) => `<!-- lisa:report run=${runId} -->`;

type AcceptedPr = {
  repo: string;
  number: number;
  url: string;
  /** The head that was accepted. */
  sha: string | null;
  approvers: string[];
  status: PrGate["status"];
  /** The gates Lisa ran at `sha`, in pass `gatesPass` (an earlier one for a PR the later passes left alone). */
  gates?: GateLine[];
  gatesPass?: number;
};

/** The run at accept, for the final report on the issue. */
export interface ReportView {
  runId: number;
  issueRef: string;
  issueTitle: string;
  /** The issue body (or an excerpt), quoted as data. */
  problem: string;
  accepted: { via: "approval" | "override" | "merge"; by: string; prs: AcceptedPr[]; note?: string };
  /** In merge order. */
  plan: { repo: string; scope?: string; prUrl?: string }[];
  passes: {
    pass: number;
    trigger: string;
    by: string;
    guidance: GuidanceView[];
    changes: { repo: string; commits: number; added: number; deleted: number; outcome: string }[];
    gates: GateLine[];
    costUsd: number;
    outcome: string;
  }[];
  humanCommits: (CommitView & { repo: string })[];
  skipped: { repo: string; reason: string }[];
  openQuestions: string[];
  /** The pull requests of Lisa's own that propose what the run taught as memory (`memory.propose: own_pr`). */
  memoryPulls?: { repo: string; number: number; url: string; file: string }[];
  totals: { sessions: number; durationMs: number; costUsd: number; limitUsd: number };
  secrets: readonly string[];
}

const MAX_PASSES = 30;
const MAX_GUIDANCE = 20;
const MAX_LISTED = 50;

/**
 * Renders the final report posted on the issue at accept: the problem, who accepted what at which
 * SHA, the plan, the pass history with its guidance, the verification at the accepted heads, the
 * human contributions, what was skipped and is still open, totals and the traceability chain.
 */
/**
 * What the report says once the acceptance it told of no longer stands (docs/operations.md): an approval
 * dismissed, a push after it. The full report is written again when the run is accepted again.
 */
export function renderWithdrawnReport(view: { runId: number; reason?: string; secrets: readonly string[] }): string {
  const reason = view.reason ? `: ${cleanLine(view.reason, { secrets: view.secrets, max: 300 })}` : "";
  return [
    reportMarker(view.runId),
    "### Lisa · report · ⚠️ Acceptance withdrawn",
    "",
    `The acceptance this report told of no longer stands${reason}. The pull requests wait for approval again; the report is written anew when the run is accepted.`,
  ].join("\n");
}

export function renderFinalReport(view: ReportView): string {
  const { secrets, accepted } = view;
  const issueRef = /^(?:[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)?#\d+$/.test(view.issueRef)
    ? view.issueRef
    : code(view.issueRef, { secrets });
  const how = accepted.via === "override" ? "by override" : `after ${plural(view.passes.length, "pass", "passes")}`;
  const headline = `${accepted.via === "merge" ? "Merged" : "Accepted"} ${how}`;
  const blocks: (string | Block)[] = [reportMarker(view.runId), `### Lisa · report · ✅ ${headline}`, ""];

  blocks.push("#### Problem", "", `**${issueRef}: ${cleanLine(view.issueTitle, { secrets, max: 256 })}**`, "");
  const problem = quote(cleanBlock(view.problem, { secrets, max: 2_000 }));
  if (problem) blocks.push({ text: `${problem}\n`, drop: 1 });

  blocks.push("#### Accepted", "", ...acceptedLines(view), "");

  blocks.push("#### Plan", "");
  if (view.plan.length === 0) blocks.push("No plan was recorded.");
  view.plan.slice(0, MAX_LISTED).forEach((step, i) => {
    const scope = cleanAfter(" — ", step.scope, { secrets, max: 200 });
    const url = safeUrl(step.prUrl);
    blocks.push({ text: `${i + 1}. ${code(step.repo, { secrets })}${scope}${url ? ` — ${url}` : ""}`, drop: 1 });
  });
  if (view.plan.length > MAX_LISTED) blocks.push(`…and ${plural(view.plan.length - MAX_LISTED, "more step")}`);
  if (view.plan.length > 1) blocks.push("", "_The steps are listed in merge order._");
  blocks.push("");

  blocks.push("#### Pass history", "");
  const passes = view.passes.slice(-MAX_PASSES);
  if (view.passes.length > passes.length) {
    blocks.push(`…${plural(view.passes.length - passes.length, "earlier pass", "earlier passes")} not shown.`, "");
  }
  for (const pass of passes) blocks.push(...passBlocks(pass, secrets));

  blocks.push("#### Verification at the accepted heads", "", ...verificationLines(view), "");

  blocks.push("#### Human contributions", "");
  if (view.humanCommits.length === 0) blocks.push("None: every commit on the branches is Lisa's.");
  for (const commit of view.humanCommits.slice(0, MAX_LISTED)) {
    blocks.push({ text: `- ${describeCommit(commit, secrets)} in ${code(commit.repo, { secrets })}`, drop: 1 });
  }
  if (view.humanCommits.length > MAX_LISTED)
    blocks.push(`- …and ${plural(view.humanCommits.length - MAX_LISTED, "more commit")}`);
  blocks.push("");

  blocks.push("#### Skipped, blocked and open questions", "");
  const questions = view.openQuestions
    .slice(0, MAX_LISTED)
    .map((question) => cleanLine(question, { secrets, max: 270 }))
    .filter(Boolean);
  if (view.skipped.length === 0 && questions.length === 0) blocks.push("None.");
  for (const item of view.skipped.slice(0, MAX_LISTED)) {
    blocks.push(
      `- ⏭️ ${code(item.repo, { secrets })} skipped: ${cleanLine(item.reason, { secrets, max: 270 }) || "no reason given"}`,
    );
  }
  if (questions.length) {
    if (view.skipped.length) blocks.push("");
    blocks.push("Open questions:", "");
    questions.forEach((question, i) => {
      blocks.push({ text: `${i + 1}. ❓ ${question}`, drop: 1 });
    });
  }
  blocks.push("");

  const { totals } = view;
  blocks.push(
    "#### Totals",
    "",
    `${plural(totals.sessions, "agent session")} · ${formatDuration(totals.durationMs)} · ${money(totals.costUsd)} of the ${money(totals.limitUsd)} limit`,
    "",
  );

  blocks.push("#### Traceability", "", "Issue → plan step → pull request → commits per pass → gates → approved head:", "");
  blocks.push(...traceabilityLines(view, issueRef));
  return fitToLimit(blocks).trimEnd();
}

function acceptedLines(view: ReportView): string[] {
  const { accepted, secrets } = view;
  const lines: string[] = [];
  const unapproved = accepted.prs.filter((pr) => pr.status !== "approved" && pr.status !== "merged" && pr.status !== "dropped");
  if (accepted.via === "override") {
    const without = unapproved.length ? ` (no approval on ${unapproved.map((pr) => prRef(pr)).join(", ")})` : "";
    lines.push(`Accepted by ${mention(accepted.by)} via \`/lisa accept\`${without}.`);
  } else if (accepted.via === "merge") {
    lines.push(`Merged by ${mention(accepted.by)}, without waiting for the gate.`);
  } else {
    lines.push(`Accepted by ${mention(accepted.by)}'s approval, the last one the gate needed.`);
  }
  const note = cleanAfter("Note: ", accepted.note, { secrets, max: 400 });
  if (note) lines.push("", note);
  lines.push("");
  for (const pr of accepted.prs) {
    const at = pr.sha ? ` at ${shortSha(pr.sha)}` : "";
    const state = {
      approved: `approved by ${pr.approvers.map(mention).join(", ") || "a writer"}`,
      merged: `🔀 merged${pr.approvers.length ? `, approved by ${pr.approvers.map(mention).join(", ")}` : ""}`,
      dropped: "🚪 closed without merging: dropped from the plan",
      pending: "no approval",
      changes_requested: "changes requested, accepted by override",
    }[pr.status];
    lines.push(`- ${prRef(pr)}${at}: ${state}`);
  }
  for (const pull of view.memoryPulls ?? []) {
    lines.push(`- 🧠 ${prRef(pull)}: what the run taught, proposed for ${code(pull.file, { secrets })}; review it like code`);
  }
  return lines;
}

function passBlocks(pass: ReportView["passes"][number], secrets: readonly string[]): (string | Block)[] {
  const trigger = cleanLine(pass.trigger, { secrets, max: 40 });
  const outcome = cleanLine(pass.outcome, { secrets, max: 60 });
  const blocks: (string | Block)[] = [
    `**Pass ${pass.pass}** · ${trigger} by ${mention(pass.by)} · ${outcome} · ${money(pass.costUsd)}`,
    "",
  ];
  const changes = pass.changes.map(
    (c) =>
      `${code(c.repo, { secrets })} ${plural(c.commits, "commit")} (+${c.added} −${c.deleted}) ${cleanLine(c.outcome, { secrets, max: 40 })}`,
  );
  blocks.push(`- Changes: ${changes.join(" · ") || "none"}`);
  blocks.push(`- Gates: ${describeGates(pass.gates, pass.pass, secrets) || "none configured"}`);
  if (pass.guidance.length) {
    blocks.push("- Guidance:", "");
    for (const item of pass.guidance.slice(0, MAX_GUIDANCE)) {
      blocks.push({ text: `${describeGuidance(item, true, secrets)}\n`, drop: 2 });
    }
    if (pass.guidance.length > MAX_GUIDANCE) blocks.push(`…and ${plural(pass.guidance.length - MAX_GUIDANCE, "more item")}`);
  }
  blocks.push("");
  return blocks;
}

/** Each PR's own gates, from the pass that ran them: never another repository's, nor a later pass's that left it alone. */
function verificationLines(view: ReportView): string[] {
  const last = view.passes.at(-1)?.pass ?? 1;
  return view.accepted.prs
    .filter((pr) => pr.status !== "dropped")
    .map((pr) => {
      const at = pr.sha ? ` at ${shortSha(pr.sha)}` : "";
      if (!pr.gates) return `- ${prRef(pr)}${at}: no gates were recorded for this head`;
      if (pr.gates.length === 0) return `- ${prRef(pr)}${at}: no gate commands are configured`;
      const pass = pr.gatesPass ?? last;
      const since = pass < last ? ` (run in pass ${pass}; unchanged since)` : "";
      return `- ${prRef(pr)}${at}: ${describeGates(pr.gates, pass, view.secrets)}${since}`;
    });
}

function traceabilityLines(view: ReportView, issueRef: string): (string | Block)[] {
  return view.plan.slice(0, MAX_LISTED).map((step, i) => {
    const pr = view.accepted.prs.find((candidate) => candidate.repo === step.repo);
    const prText = pr ? prRef(pr) : link("pull request", step.prUrl) || "no pull request";
    const commits = view.passes
      .flatMap((pass) => {
        const change = pass.changes.find((c) => c.repo === step.repo);
        return change ? [`pass ${pass.pass}: ${change.commits}`] : [];
      })
      .join(", ");
    const gates = pr?.gates ?? [];
    const gateText = gates.length ? (gates.every((gate) => gate.passed) ? "gates ✅" : "gates ❌") : "no gates";
    const approval =
      pr?.status === "dropped"
        ? "closed, not accepted"
        : pr?.sha
          ? `${pr.status === "merged" ? "merged" : "accepted"} at ${shortSha(pr.sha)}${pr.approvers.length ? ` by ${pr.approvers.map(mention).join(", ")}` : ""}`
          : "not accepted";
    return {
      text: `- ${issueRef} → step ${i + 1} ${code(step.repo, { secrets: view.secrets })} → ${prText} → commits (${commits || "none"}) → ${gateText} → ${approval}`,
      drop: 1,
    };
  });
}
