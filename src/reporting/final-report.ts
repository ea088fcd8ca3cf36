import { fitBody, formatDuration, mention, money, oneLine, quote, short } from "./format.ts";
import type { CommitView, GateLine, GuidanceView, PrGate } from "./views.ts";

export const reportMarker = (runId: number) => `<!-- lisa:report run=${runId} -->`;

export interface ReportView {
  runId: number;
  issueRef: string;
  issueTitle: string;
  problem: string;
  accepted: {
    via: "approval" | "override";
    by: string;
    prs: { repo: string; number: number; url: string; sha: string | null; approvers: string[]; status: PrGate["status"] }[];
    note?: string;
  };
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
  totals: { sessions: number; durationMs: number; costUsd: number; limitUsd: number };
  secrets: string[];
}

/** The final report on the issue at accept (seed 001's report): what was asked, decided, done and verified. */
export function renderFinalReport(view: ReportView): string {
  const s = view.secrets;
  const how =
    view.accepted.via === "override" ? `accepted by ${mention(view.accepted.by)} via \`/lisa accept\`` : `accepted by approval`;
  const lines = [
    reportMarker(view.runId),
    `### Lisa · final report · ${oneLine(view.issueTitle, s, 120)}`,
    "",
    "**Problem**",
    quote(view.problem || "(no description)", s, 1_000),
    "",
    `**Accepted:** ${how}${view.accepted.note ? ` (${oneLine(view.accepted.note, s, 200)})` : ""}`,
    ...view.accepted.prs.map(
      (pr) =>
        `- ${pr.repo}#${pr.number} at \`${short(pr.sha)}\`: ${pr.status === "merged" ? "merged" : pr.approvers.length ? `approved by ${pr.approvers.map(mention).join(", ")}` : pr.status.replace(/_/g, " ")} (${pr.url})`,
    ),
    "",
    "**Plan** (merge in this order)",
    ...view.plan.map(
      (p, i) => `${i + 1}. \`${p.repo}\`${p.prUrl ? ` — ${p.prUrl}` : ""}${p.scope ? ` — ${oneLine(p.scope, s, 200)}` : ""}`,
    ),
    "",
    "**Pass history**",
  ];
  for (const pass of view.passes) {
    lines.push(`- Pass ${pass.pass}: ${pass.trigger} by ${mention(pass.by)} · ${pass.outcome} · ${money(pass.costUsd)}`);
    for (const g of pass.guidance)
      lines.push(
        `  - guidance ${g.n} (${mention(g.author)}${g.status ? `, ${g.status.replace(/_/g, " ")}` : ""}): ${oneLine(g.body, s, 200)}`,
      );
    for (const c of pass.changes)
      lines.push(`  - \`${c.repo}\`: ${c.outcome}, ${c.commits} commit${c.commits === 1 ? "" : "s"} (+${c.added} −${c.deleted})`);
    if (pass.gates.length)
      lines.push(
        `  - gates: ${pass.gates.map((g) => `${g.passed ? "✅" : "❌"} \`${g.command.replace(/`/g, "'")}\``).join(" ")}`,
      );
  }
  lines.push("");
  if (view.humanCommits.length) {
    lines.push(
      "**Human contributions**",
      ...view.humanCommits.map((c) => `- \`${c.repo}\` \`${short(c.sha)}\` ${mention(c.author)}: ${oneLine(c.subject, s, 120)}`),
      "",
    );
  }
  if (view.skipped.length || view.openQuestions.length) {
    lines.push(
      "**Skipped, blocked and open questions**",
      ...view.skipped.map((k) => `- \`${k.repo}\`: ${k.reason}`),
      ...view.openQuestions.map((q) => `- ${oneLine(q, s, 300)}`),
      "",
    );
  }
  const { totals } = view;
  lines.push(
    `**Totals:** ${totals.sessions} agent session${totals.sessions === 1 ? "" : "s"} · ${formatDuration(totals.durationMs)} · ${money(totals.costUsd)} of ${money(totals.limitUsd)}`,
  );
  lines.push(
    "",
    `**Traceability:** ${view.issueRef} → plan → ${view.accepted.prs.map((pr) => `${pr.repo}#${pr.number}@${short(pr.sha)}`).join(", ")} → gates → ${view.accepted.via}`,
  );
  return fitBody(lines.join("\n"));
}
