import type { Block } from "./fit-to-limit.ts";
import { plural, repoName } from "./format.ts";
import { reflectionBlocks } from "./package-reflections.ts";
import type { TrackingView } from "./tracking-view.ts";
import { cleanBlock, code, fenced } from "./untrusted.ts";

const MAX_GATE_FAILURES = 3;

/** The last gate failure of the first few steps that have one, then the run's error and how to retry. */
export function failureBlocks(view: TrackingView): (string | Block)[] {
  const { secrets } = view;
  const blocks: (string | Block)[] = [];
  const failures = view.steps.filter((step) => step.lastGateFailure);
  for (const step of failures.slice(0, MAX_GATE_FAILURES)) {
    const failure = step.lastGateFailure;
    if (!failure) continue;
    const earlier = failure.judge?.earlier;
    blocks.push({
      text: [
        failure.judge
          ? `**A judge's FAIL** in ${repoName(step.repo)}: ${code(failure.judge.criterion, { secrets })}`
          : `**Gate failure** in ${repoName(step.repo)}: ${code(failure.command, { secrets })}`,
        "",
        // A gate such as `test -f x` fails silently: an empty box would look like a lost output.
        failure.output.trim() ? fenced(failure.output, { secrets }) : "_It failed without printing anything._",
        "",
        ...(earlier ? ["Before the last fix, the judge said:", "", fenced(`FAIL: ${earlier}`, { secrets }), ""] : []),
      ].join("\n"),
      drop: 2,
    });
    blocks.push(...reflectionBlocks({ reflections: step.reflections ?? [], secrets }));
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
  return blocks;
}
