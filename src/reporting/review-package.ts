import { fitBody, formatDuration, gateLine, mention, money, oneLine, quote, short } from "./format.ts";
import type { CommitView, FileChange, GateLine, GuidanceView, PrGate } from "./views.ts";

export const passMarker = (runId: number, pass: number, stepId: number) =>
  `<!-- lisa:pass run=${runId} pass=${pass} step=${stepId} -->`;

export interface PackageView {
  runId: number;
  pass: number;
  maxPasses: number;
  stepId: number;
  repo: string;
  phase: "working" | "ready" | "blocked" | "skipped" | "aborted";
  trigger: {
    kind: "initial" | "redirect" | "review" | "continue";
    by: string;
    url?: string;
    inlineCount?: number;
    excerpt?: string;
  };
  range?: { from: string; to: string; compareUrl?: string };
  commits: CommitView[];
  files: FileChange[];
  gates: GateLine[];
  headSha?: string;
  guidance: GuidanceView[];
  openQuestions: string[];
  recommendation?: { kind: "accept" | "continue" | "blocked"; text?: string };
  refinements: string[];
  block?: { reason: string; tried?: string; needed?: string; wipRef?: string; wipUrl?: string };
  cost: { sessions: number; providers: string[]; durationMs: number; passUsd: number; runUsd: number; limitUsd: number };
  siblings: PrGate[];
  secrets: string[];
}

const PHASE: Record<PackageView["phase"], string> = {
  working: "🔧 working",
  ready: "👀 ready for review",
  blocked: "⛔ blocked",
  skipped: "⏭️ skipped",
  aborted: "⏹️ stopped",
};
const STATUS: Record<NonNullable<GuidanceView["status"]>, string> = {
  addressed: "✅",
  partly: "◐",
  not_addressed: "❌",
  not_applicable: "➖",
};

function startedBy(view: PackageView): string {
  const { trigger } = view;
  const by = mention(trigger.by);
  const inline = trigger.inlineCount ? ` (${trigger.inlineCount} inline comment${trigger.inlineCount === 1 ? "" : "s"})` : "";
  const link = trigger.url ? ` ([link](${trigger.url}))` : "";
  const what = {
    initial: `the label by ${by}`,
    redirect: `${by}'s redirect`,
    review: `${by}'s review, changes requested${inline}`,
    continue: `${by}'s \`/lisa continue\``,
  }[trigger.kind];
  return `**Started by** ${what}${link}`;
}

function guidanceLines(view: PackageView): string[] {
  return view.guidance.map((g) => {
    const icon = g.status ? STATUS[g.status] : "•";
    const where = g.where
      ? ` \`${oneLine(g.where, view.secrets, 120).replace(/`/g, "")}\`${g.outdated ? " (on an earlier commit)" : ""}`
      : "";
    const note = g.note ? `: ${oneLine(g.note, view.secrets, 300)}` : "";
    const replied = g.replied ? " · replied in thread" : "";
    return `${g.n}. ${icon}${where} "${oneLine(g.body, view.secrets, 160)}" (${mention(g.author)})${note}${replied}`;
  });
}

/** The review package of one pass on one PR (§5.3): what changed, what Lisa verified, and how to answer. */
export function renderReviewPackage(view: PackageView): string {
  const lines = [
    passMarker(view.runId, view.pass, view.stepId),
    `### Lisa · pass ${view.pass} (of at most ${view.maxPasses}) · ${view.repo} · ${PHASE[view.phase]}`,
    "",
  ];
  lines.push(startedBy(view));
  if (view.trigger.excerpt) lines.push(quote(view.trigger.excerpt, view.secrets, 600));
  lines.push("");
  if (view.phase === "working") {
    if (view.guidance.length) lines.push("**Guidance for this pass**", ...guidanceLines(view), "");
    lines.push("_Lisa is working on this pull request; this comment becomes the pass's review package when it ends._");
    return fitBody(lines.join("\n"));
  }
  const lisaCommits = view.commits.filter((c) => !c.human);
  const added = view.files.reduce((sum, f) => sum + f.added, 0);
  const deleted = view.files.reduce((sum, f) => sum + f.deleted, 0);
  if (view.range) {
    const compare = view.range.compareUrl ? ` ([compare](${view.range.compareUrl}))` : "";
    lines.push(
      `**Changes in this pass** · \`${short(view.range.from)}..${short(view.range.to)}\`${compare} · ${lisaCommits.length} commit${lisaCommits.length === 1 ? "" : "s"} · +${added} −${deleted} in ${view.files.length} file${view.files.length === 1 ? "" : "s"}`,
    );
    for (const f of view.files.slice(0, 30))
      lines.push(`- \`${oneLine(f.path, view.secrets, 150).replace(/`/g, "'")}\` (+${f.added} −${f.deleted})`);
    if (view.files.length > 30) lines.push(`- …and ${view.files.length - 30} more files`);
  } else {
    lines.push("**Changes in this pass:** none pushed to this pull request.");
  }
  const human = view.commits.filter((c) => c.human);
  if (human.length)
    lines.push(
      `- Human commits kept: ${human.map((c) => `\`${short(c.sha)}\` ${mention(c.author)} "${oneLine(c.subject, view.secrets, 80)}"`).join(", ")}`,
    );
  lines.push("");
  if (view.gates.length) {
    lines.push(`**Verified by Lisa${view.headSha ? ` at \`${short(view.headSha)}\`` : ""}**`);
    for (const g of view.gates)
      lines.push(
        `- ${g.passed ? "✅" : "❌"} \`${g.command.replace(/`/g, "'")}\`${g.regressed ? " ⚠️ green in the previous pass: a regression" : ""}`,
      );
  } else {
    lines.push("**Verified by Lisa:** no gate commands are configured (`gates` in `.github/lisa.yml`).");
  }
  lines.push("");
  if (view.guidance.length) lines.push("**Your guidance**", ...guidanceLines(view), "");
  if (view.block) {
    lines.push(`**Blocked:** ${oneLine(view.block.reason, view.secrets, 500)}`);
    if (view.block.tried) lines.push(`- Tried: ${oneLine(view.block.tried, view.secrets, 400)}`);
    if (view.block.needed) lines.push(`- Needed: ${oneLine(view.block.needed, view.secrets, 400)}`);
    if (view.block.wipRef)
      lines.push(`- The attempt is on \`${view.block.wipRef}\`; this pull request stays at its last verified head.`);
    lines.push("");
  }
  if (view.openQuestions.length)
    lines.push(
      "**Open questions for you**",
      ...view.openQuestions.map((q, i) => `${i + 1}. ${oneLine(q, view.secrets, 400)}`),
      "",
    );
  if (view.recommendation) {
    const text = view.recommendation.text ? `: ${oneLine(view.recommendation.text, view.secrets, 400)}` : "";
    lines.push(`**Agent recommendation:** ${view.recommendation.kind.toUpperCase()}${text}`);
  }
  if (view.refinements.length)
    lines.push(
      `**Proposed refinements** (\`/lisa continue\` does these): ${view.refinements.map((r) => oneLine(r, view.secrets, 200)).join("; ")}`,
    );
  const { cost } = view;
  lines.push(
    `**This pass:** ${cost.sessions} session${cost.sessions === 1 ? "" : "s"}${cost.providers.length ? ` · ${cost.providers.join(", ")}` : ""} · ${formatDuration(cost.durationMs)} · ${money(cost.passUsd)} · run total ${money(cost.runUsd)} of ${money(cost.limitUsd)}`,
    "",
  );
  const plan = view.siblings.length ? ` (the plan's PRs: ${view.siblings.map(gateLine).join(" · ")})` : "";
  lines.push(
    view.phase === "blocked"
      ? "**To answer:** `/lisa fix [notes]` (try again with a fresh budget, from the attempt) · `/lisa skip` (leave it and go to review) · `/lisa abort`"
      : `**To answer:** approve this pull request to accept it${plan} · request changes with inline comments · \`/lisa redirect <what to change>\` · \`/lisa continue\` (do the agent's refinements) · \`/lisa abort\``,
  );
  return fitBody(lines.join("\n"));
}
