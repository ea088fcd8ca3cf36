import { type Block, fitToLimit } from "./fit-to-limit.ts";
import { formatDuration, mention, money, plural, repoName } from "./format.ts";
import { numberedBlocks } from "./numbered-blocks.ts";
import { answers } from "./package-answers.ts";
import { blockedBlocks } from "./package-blocked.ts";
import { changeBlocks } from "./package-changes.ts";
import { guidanceBlocks } from "./package-guidance.ts";
import { reflectionBlocks } from "./package-reflections.ts";
import { gateBlocks, networkBlocks } from "./package-verification.ts";
import type { PackageView } from "./package-view.ts";
import { cleanAfter, cleanBlock, cleanLine, link, quote } from "./untrusted.ts";

export type { PackageView } from "./package-view.ts";

/** The hidden marker by which the comment of one pass on one step's pull request is found again. */
export const passMarker = (runId: number, pass: number, stepId: number) =>
  `<!-- lisa:pass run=${runId} pass=${pass} step=${stepId} -->`;

const HEADLINE: Record<PackageView["phase"], string> = {
  working: "🔧 working",
  ready: "👀 ready for review",
  blocked: "⛔ blocked",
  skipped: "⏭️ skipped",
  aborted: "⏹️ aborted",
};

/** `@bob's review (2 inline comments)`: who started the pass, and how. */
export function describeTrigger(trigger: PackageView["trigger"]): string {
  const by = mention(trigger.by);
  const how = {
    initial: `${by} (label)`,
    redirect: `${by}'s redirect`,
    review: `${by}'s review`,
    continue: `${by}'s \`/lisa continue\` (the agent's refinements)`,
  }[trigger.kind];
  const inline = trigger.inlineCount ? ` (${plural(trigger.inlineCount, "inline comment")})` : "";
  const where = link(trigger.kind === "review" ? "review" : "comment", trigger.url);
  return `${how}${inline}${where ? ` (${where})` : ""}`;
}

/**
 * Renders the comment a pass keeps on one pull request. While `working` it says who started the
 * pass and with which guidance; at the end of the pass it becomes the review package: changes,
 * verification, the guidance with the agent's status, open questions, recommendation, cost and
 * how to answer. Always within GitHub's comment limit.
 */
export function renderReviewPackage(view: PackageView): string {
  const { secrets } = view;
  const blocks: (string | Block)[] = [
    passMarker(view.runId, view.pass, view.stepId),
    `### Lisa · pass ${view.pass} (of at most ${view.maxPasses}) · ${repoName(view.repo)} · ${HEADLINE[view.phase]}`,
    "",
  ];
  const excerpt = quote(cleanBlock(view.trigger.excerpt ?? "", { secrets, max: 600 }));

  if (view.phase === "working") {
    blocks.push(`⏳ Pass ${view.pass} started by ${describeTrigger(view.trigger)}${excerpt ? ":" : ""}`);
    if (excerpt) blocks.push({ text: excerpt, drop: 1 });
    blocks.push("", ...guidanceBlocks(view, "**Guidance for this pass**"));
    blocks.push("_This comment is updated when the pass ends._");
    return fitToLimit(blocks);
  }

  blocks.push(`**Started by** ${describeTrigger(view.trigger)}${excerpt ? ":" : ""}`);
  if (excerpt) blocks.push({ text: excerpt, drop: 1 });
  blocks.push("");
  if (view.block) blocks.push(...blockedBlocks(view.phase, view.block, secrets));
  blocks.push(...changeBlocks(view), ...gateBlocks(view), ...reflectionBlocks(view), ...networkBlocks(view));
  blocks.push(...guidanceBlocks(view, "**Your guidance**"));
  blocks.push(...numberedBlocks("**Open questions for you**", view.openQuestions, secrets));
  if (view.recommendation) {
    const text = cleanAfter(": ", view.recommendation.text, { secrets, max: 270 });
    blocks.push(`**Agent recommendation:** ${view.recommendation.kind.toUpperCase()}${text}`, "");
  }
  blocks.push(
    ...numberedBlocks(
      `**Proposed refinements for pass ${view.pass + 1}** (\`/lisa continue\` does these)`,
      view.refinements,
      secrets,
    ),
  );
  blocks.push(costLine(view), "", `**To answer:** ${answers(view)}`);
  return fitToLimit(blocks);
}

function costLine({ cost, secrets }: PackageView): string {
  const providers = cost.providers.map((provider) => cleanLine(provider, { secrets, max: 60 })).filter(Boolean);
  return [
    `**This pass:** ${plural(cost.sessions, "session")}`,
    ...(providers.length ? [providers.join(", ")] : []),
    formatDuration(cost.durationMs),
    `${money(cost.passUsd)}${cost.judged ? ` (judges ${money(cost.judgeUsd ?? 0)})` : ""}`,
    `run total ${money(cost.runUsd)} of ${money(cost.limitUsd)}`,
  ].join(" · ");
}
