import { plural, repoName } from "./format.ts";
import { code } from "./untrusted.ts";
import type { GateLine, JudgeView } from "./views.ts";

const MAX_GATES = 50;

/** At most `max` gates, the red ones first, and what the ones left out say: `, all green` or ` (2 red)`. */
export function failedFirst(gates: GateLine[], max = MAX_GATES): { shown: GateLine[]; more: string } {
  if (gates.length <= max) return { shown: gates, more: "" };
  const ordered = [...gates.filter((gate) => !gate.passed), ...gates.filter((gate) => gate.passed)];
  const hidden = ordered.slice(max);
  const red = hidden.filter((gate) => !gate.passed).length;
  return {
    shown: ordered.slice(0, max),
    more: `…and ${plural(hidden.length, "more gate")}${red ? ` (${red} red)` : ", all green"}`,
  };
}

/** Gates on one line: `✅ \`npm ci\` · ❌ \`npm test\``, at most 20 of them. */
export function describeGates(gates: GateLine[], pass: number, secrets: readonly string[]): string {
  const { shown, more } = failedFirst(gates, 20);
  const line = shown.map((gate) => describeGate(gate, pass, secrets)).join(" · ");
  return more ? `${line} · ${more}` : line;
}

/** `✅ \`npm test\``, or `❌ acme/api: \`npm test\` · ⚠️ regression: green in pass 2, red now`. */
export function describeGate(gate: GateLine, pass: number, secrets: readonly string[]): string {
  if (gate.judge) return describeJudge(gate.judge, gate.repo, secrets);
  const command = `${gate.repo ? `${repoName(gate.repo)}: ` : ""}${gate.ci ? "CI " : ""}${code(gate.command, { secrets })}`;
  if (gate.pending) return `⏳ ${command} still running`;
  if (gate.passed) return `✅ ${command}${gate.fixed ? " (fixed by Lisa in this pass)" : ""}`;
  return gate.regressed ? `❌ ${command} · ⚠️ regression: green in pass ${pass - 1}, red now` : `❌ ${command}`;
}

const VERDICT_MARK: Record<JudgeView["verdict"], string> = { PASS: "✅", FAIL: "❌", SKIPPED: "⏭️" };

/**
 * `✅ judge \`The README explains the option\` (gemini): PASS \`It documents --dry-run in Usage.\``:
 * the judge's sentence is model output about agent-written code, so it stays an inert code span.
 */
export function describeJudge(judge: JudgeView, repo: string | undefined, secrets: readonly string[]): string {
  const where = repo ? `${repoName(repo)}: ` : "";
  const criterion = code(judge.criterion, { secrets, max: 120 });
  const by = judge.provider ? ` (${code(judge.provider, { secrets, max: 40 })})` : "";
  const head = `${VERDICT_MARK[judge.verdict]} ${where}judge ${criterion}${by}`;
  if (judge.verdict === "SKIPPED") return `${head}: skipped, as this pass changed none of its paths`;
  const at = judge.file ? ` at ${code(`${judge.file}${judge.line ? `:${judge.line}` : ""}`, { secrets, max: 200 })}` : "";
  const before = judge.verdict === "PASS" ? "after a FAIL this pass" : "before the last fix it said";
  const again = judge.earlier ? ` · ${before}: ${code(judge.earlier, { secrets, max: 300 })}` : "";
  return `${head}: ${judge.verdict} ${code(judge.reason, { secrets, max: 300 })}${at}${again}`;
}
