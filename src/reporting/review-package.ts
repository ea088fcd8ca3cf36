import { describeGate, failedFirst } from "./describe-gate.ts";
import { describePrGate } from "./describe-pr-gate.ts";
import { type Block, fitToLimit } from "./fit-to-limit.ts";
import { formatDuration, mention, money, plural, repoName, shortSha } from "./format.ts";
import { cleanAfter, cleanBlock, cleanLine, code, link, listItem, quote } from "./untrusted.ts";
import type { CommitView, FileChange, GateLine, GuidanceView, PrGate } from "./views.ts";

/** The hidden marker by which the comment of one pass on one step's pull request is found again. */
export const passMarker = (runId: number, pass: number, stepId: number) =>
  `<!-- lisa:pass run=${runId} pass=${pass} step=${stepId} -->`;

/** What a pass did to one pull request, for its review package (design §5.3). */
export interface PackageView {
  runId: number;
  pass: number;
  maxPasses: number;
  stepId: number;
  /** `owner/name` of this pull request's repository. */
  repo: string;
  /** `working` while the pass runs; the others once it ended on this pull request. */
  phase: "working" | "ready" | "blocked" | "skipped" | "aborted";
  /** The gesture that started the pass; `excerpt` is the human's text. */
  trigger: {
    kind: "initial" | "redirect" | "review" | "continue";
    by: string;
    url?: string;
    inlineCount?: number;
    excerpt?: string;
  };
  /** The pass's commits on the branch: `from` is the head before the pass, `to` the head after. */
  range?: { from: string; to: string; compareUrl?: string };
  commits: CommitView[];
  files: FileChange[];
  gates: GateLine[];
  /** The head the gates ran at. */
  headSha?: string;
  /** Tests Lisa added in an earlier pass that this pass edited or deleted. */
  editedEarlierTests?: string[];
  guidance: GuidanceView[];
  openQuestions: string[];
  recommendation?: { kind: "accept" | "continue" | "blocked"; text?: string };
  refinements: string[];
  block?: { reason: string; tried?: string; needed?: string; wipRef?: string; wipUrl?: string };
  cost: { sessions: number; providers: string[]; durationMs: number; passUsd: number; runUsd: number; limitUsd: number };
  /** Connections Lisa's egress proxy refused to this pass's agent sessions and gates on this pull request. */
  network?: { refused: number; hosts: string[] };
  /** Every pull request of the run, this one included. */
  siblings: PrGate[];
  /** Exact secret values to redact. */
  secrets: readonly string[];
}

const HEADLINE: Record<PackageView["phase"], string> = {
  working: "🔧 working",
  ready: "👀 ready for review",
  blocked: "⛔ blocked",
  skipped: "⏭️ skipped",
  aborted: "⏹️ aborted",
};

const STATUS: Record<NonNullable<GuidanceView["status"]>, string> = {
  addressed: "✅ addressed",
  partly: "◐ partly addressed",
  not_addressed: "❌ not addressed",
  not_applicable: "➖ not applicable",
};

const MAX_FILES = 30;
const MAX_GUIDANCE = 30;
const MAX_LISTED = 20;
const MAX_SIBLINGS = 10;

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
  if (view.block) blocks.push(...blockBlocks(view.phase, view.block, secrets));
  blocks.push(...changeBlocks(view), ...gateBlocks(view), ...networkBlocks(view), ...guidanceBlocks(view, "**Your guidance**"));
  blocks.push(...numbered("**Open questions for you**", view.openQuestions, secrets));
  if (view.recommendation) {
    const text = cleanAfter(": ", view.recommendation.text, { secrets, max: 270 });
    blocks.push(`**Agent recommendation:** ${view.recommendation.kind.toUpperCase()}${text}`, "");
  }
  blocks.push(
    ...numbered(`**Proposed refinements for pass ${view.pass + 1}** (\`/lisa continue\` does these)`, view.refinements, secrets),
  );
  blocks.push(costLine(view), "", `**To answer:** ${answers(view)}`);
  return fitToLimit(blocks);
}

function blockBlocks(
  phase: PackageView["phase"],
  block: NonNullable<PackageView["block"]>,
  secrets: readonly string[],
): string[] {
  const label = phase === "skipped" ? "⏭️ Skipped" : phase === "aborted" ? "⏹️ Aborted" : "⛔ Blocked";
  const lines = [`**${label}:** ${cleanLine(block.reason, { secrets, max: 270 }) || "no reason given"}`, ""];
  const tried = cleanBlock(block.tried ?? "", { secrets, max: 2_000 });
  const needed = cleanBlock(block.needed ?? "", { secrets, max: 2_000 });
  if (tried) lines.push("**What was tried**", "", tried, "");
  if (needed) lines.push("**What is needed**", "", needed, "");
  if (block.wipRef) {
    const browse = link("browse", block.wipUrl);
    lines.push(
      `**Work in progress:** ${code(block.wipRef, { secrets })}${browse ? ` (${browse})` : ""}; the pull request's branch is untouched, so its head is the last one that passed the gates.`,
      "",
    );
  }
  return lines;
}

function changeBlocks(view: PackageView): (string | Block)[] {
  const { secrets } = view;
  if (view.commits.length === 0 && view.files.length === 0) return ["**Changes in this pass:** none", ""];
  const added = view.files.reduce((sum, file) => sum + file.added, 0);
  const deleted = view.files.reduce((sum, file) => sum + file.deleted, 0);
  const parts = ["**Changes in this pass**"];
  if (view.range) {
    const compare = link("compare", view.range.compareUrl);
    parts.push(`${shaRange(view.range.from, view.range.to)}${compare ? ` (${compare})` : ""}`);
  }
  parts.push(plural(view.commits.length, "commit"), `+${added} −${deleted} in ${plural(view.files.length, "file")}`);
  const blocks: (string | Block)[] = [parts.join(" · ")];
  for (const file of view.files.slice(0, MAX_FILES)) {
    blocks.push({ text: `- ${code(file.path, { secrets })} (+${file.added} −${file.deleted})`, drop: 3 });
  }
  if (view.files.length > MAX_FILES) blocks.push(`- …and ${plural(view.files.length - MAX_FILES, "more file")}`);
  const human = view.commits.filter((commit) => commit.human);
  if (human.length) {
    blocks.push(`- Human ${human.length === 1 ? "commit" : "commits"} kept:`);
    for (const commit of human.slice(0, MAX_LISTED)) blocks.push({ text: `  - ${describeCommit(commit, secrets)}`, drop: 2 });
    if (human.length > MAX_LISTED) blocks.push(`  - …and ${plural(human.length - MAX_LISTED, "more commit")}`);
  }
  blocks.push("");
  return blocks;
}

/** `` `1a2b3c4..9f8e7d6` `` */
function shaRange(from: string, to: string): string {
  const [a, b] = [shortSha(from), shortSha(to)];
  return a.startsWith("`") && !a.startsWith("``") && b.startsWith("`") && !b.startsWith("``")
    ? `\`${a.slice(1, -1)}..${b.slice(1, -1)}\``
    : `${a}..${b}`;
}

/** `` `77aa11a` @bob "fix typo" `` */
export function describeCommit(commit: CommitView, secrets: readonly string[]): string {
  return `${shortSha(commit.sha)} ${mention(commit.author)} "${cleanLine(commit.subject, { secrets, max: 120 })}"`;
}

function gateBlocks(view: PackageView): (string | Block)[] {
  const head = view.headSha ?? view.range?.to;
  const at = head ? ` at ${shortSha(head)}` : "";
  const allPassed = view.gates.every((gate) => gate.passed);
  const blocks: (string | Block)[] = [allPassed ? `**Verified by Lisa${at}**` : `**Gates run by Lisa${at}**`];
  if (view.gates.length === 0) blocks.push("- No gate commands are configured for this repository.");
  const { shown, more } = failedFirst(view.gates);
  for (const gate of shown) blocks.push({ text: `- ${describeGate(gate, view.pass, view.secrets)}`, drop: 1 });
  if (more) blocks.push(`- ${more}`);
  for (const path of (view.editedEarlierTests ?? []).slice(0, MAX_LISTED)) {
    blocks.push({
      text: `- ⚠️ ${code(path, { secrets: view.secrets })}, added in an earlier pass, was edited in this pass`,
      drop: 1,
    });
  }
  blocks.push("");
  return blocks;
}

/** `**Network:** 2 connections refused (hosts `a:443`, `b:80`)`: what the sandbox tried to reach and was not let. */
function networkBlocks({ network, secrets }: PackageView): string[] {
  if (!network?.refused) return [];
  // The hosts are what the agent or a gate asked for: attacker text, each an inert code span.
  const hosts = network.hosts.slice(0, MAX_LISTED).map((host) => code(host, { secrets, max: 100 }));
  return [
    `**Network:** ${plural(network.refused, "connection")} refused by Lisa's sandbox${hosts.length ? ` (hosts ${hosts.join(", ")})` : ""}`,
    "",
  ];
}

function guidanceBlocks(view: PackageView, heading: string): (string | Block)[] {
  if (view.guidance.length === 0) return [];
  const blocks: (string | Block)[] = [heading];
  for (const item of view.guidance.slice(0, MAX_GUIDANCE)) {
    blocks.push({ text: `${describeGuidance(item, view.phase !== "working", view.secrets)}\n`, drop: 2 });
  }
  if (view.guidance.length > MAX_GUIDANCE) blocks.push(`…and ${plural(view.guidance.length - MAX_GUIDANCE, "more item")}`, "");
  return blocks;
}

const SOURCE: Record<GuidanceView["source"], string> = {
  command: "`/lisa redirect`",
  review: "review",
  inline: "inline comment",
  continue: "`/lisa continue` (agent's refinement)",
  fix: "`/lisa fix` notes",
};

/**
 * One guidance item as a numbered list entry: status (when `withStatus`), author, source, place,
 * link, the agent's note, then the human's text quoted under it.
 */
export function describeGuidance(item: GuidanceView, withStatus: boolean, secrets: readonly string[]): string {
  const marker = `${item.n}.`;
  const status = withStatus ? `${item.status ? STATUS[item.status] : "❔ no status from the agent"} · ` : "";
  const where = item.where ? ` on ${code(item.where, { secrets })}` : "";
  const url = link(item.source === "review" ? "review" : "comment", item.url);
  const note = withStatus && item.note ? cleanLine(item.note, { secrets, max: 270 }) : "";
  const tail = [item.outdated ? "on an earlier commit" : "", withStatus && item.replied ? "replied in thread" : ""].filter(
    Boolean,
  );
  const first = `${status}${mention(item.author)}'s ${SOURCE[item.source]}${where}${url ? ` (${url})` : ""}${note ? `: ${note}` : ""}${tail.map((t) => ` · ${t}`).join("")}`;
  const body = quote(cleanBlock(item.body, { secrets, max: 1_000 }));
  return listItem(marker, body ? `${first}\n${body}` : first);
}

function numbered(heading: string, items: string[], secrets: readonly string[]): (string | Block)[] {
  const cleaned: string[] = [];
  let more = 0;
  for (const item of items) {
    if (cleaned.length === MAX_LISTED) {
      more += item.trim() ? 1 : 0;
      continue;
    }
    const clean = cleanBlock(item, { secrets, max: 1_000, minHeadingDepth: 6 });
    if (clean) cleaned.push(clean);
  }
  if (cleaned.length === 0) return [];
  const blocks: (string | Block)[] = [heading];
  cleaned.forEach((clean, i) => {
    blocks.push({ text: listItem(`${i + 1}.`, clean), drop: 1 });
  });
  if (more) blocks.push(`…and ${plural(more, "more")}`);
  blocks.push("");
  return blocks;
}

function costLine({ cost, secrets }: PackageView): string {
  const providers = cost.providers.map((provider) => cleanLine(provider, { secrets, max: 60 })).filter(Boolean);
  return [
    `**This pass:** ${plural(cost.sessions, "session")}`,
    ...(providers.length ? [providers.join(", ")] : []),
    formatDuration(cost.durationMs),
    money(cost.passUsd),
    `run total ${money(cost.runUsd)} of ${money(cost.limitUsd)}`,
  ].join(" · ");
}

/** The gestures that answer this package, by phase. */
function answers(view: PackageView): string {
  const next = view.pass + 1;
  const lastPass = view.pass >= view.maxPasses;
  const redirect = "`/lisa redirect <what to change>`";
  const approve = `approve this PR to accept it${siblingGates(view)}`;
  const limit = `pass ${view.pass} of ${view.maxPasses} was the last one (\`limits.max_passes\`); raise it in \`.github/lisa.yml\` for more`;
  switch (view.phase) {
    case "blocked":
      return [
        "`/lisa fix [notes]` retries this step with a fresh budget (push to the work-in-progress branch first if you want to help)",
        "`/lisa skip` leaves this PR at its last verified head",
        "`/lisa abort` stops the pass",
        ...(lastPass ? [] : [`${redirect} starts pass ${next} instead`]),
      ].join(" · ");
    case "aborted":
      return [
        `Stopped pass ${view.pass}`,
        approve,
        ...(lastPass ? [limit] : [`${redirect}${view.refinements.length ? " or `/lisa continue`" : ""} starts pass ${next}`]),
        "closing the PRs ends the run",
      ].join(" · ");
    default:
      return [
        approve,
        ...(lastPass
          ? [limit]
          : [
              "request changes with inline comments",
              redirect,
              ...(view.refinements.length ? ["`/lisa continue` (do the agent's refinements)"] : []),
            ]),
        "close this PR to drop it from the plan",
      ].join(" · ");
  }
}

/** ` (the plan's PRs: api#5 ✅ @ann · web#7 ⏳ waiting)` for a run with more than one pull request. */
function siblingGates(view: PackageView): string {
  if (view.siblings.length < 2) return "";
  const owner = view.repo.split("/")[0];
  const shown = view.siblings.slice(0, MAX_SIBLINGS).map((gate) => describePrGate(gate, { owner }));
  const more =
    view.siblings.length > MAX_SIBLINGS ? ` · …and ${plural(view.siblings.length - MAX_SIBLINGS, "more", "more")}` : "";
  return ` (the plan's PRs: ${shown.join(" · ")}${more})`;
}
