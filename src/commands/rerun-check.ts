import type { CheckReport } from "../github/github-port.ts";
import { updateCheck } from "../publication/check-runs.ts";
import { CHECK_NAME } from "../reporting/check-summary.ts";
import { mention, shortSha } from "../reporting/format.ts";
import type { RunRow, StepRow } from "../store/store.ts";
import { TERMINAL_RUN_STATES } from "../store/transitions.ts";
import type { CheckGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";

/** The line a refusal starts a check run's summary with; a later refusal replaces it. */
const REFUSED = "**Lisa did not run the gates again:**";

/** The states whose pass stands at its gate, with a head whose gates mean something to a reviewer. */
const AT_GATE: ReadonlySet<RunRow["state"]> = new Set(["review", "accepted"]);

/**
 * "Re-run" pressed on Lisa's check run: the gates run again at that head (workflow/step/rerun-gates.ts) when
 * the head is still the pull request's and the run waits at its gate; otherwise the check run
 * pressed says why not, above what it said.
 */
export async function onCheckRerun(scene: Scene, gesture: CheckGesture): Promise<string> {
  const { run, step } = scene;
  if (!run || !step) return "ignored: not one of Lisa's pull requests";
  const why = await whyNot(scene, run, step, gesture.headSha);
  if (why) {
    await refuse(scene, gesture, why);
    return `check re-run refused: ${why}`;
  }
  return scene.controls.rerunGates(run.id, step.id, { headSha: gesture.headSha, sender: gesture.sender });
}

async function whyNot(scene: Scene, run: RunRow, step: StepRow, headSha: string): Promise<string | undefined> {
  if (TERMINAL_RUN_STATES.has(run.state) || run.state === "failed" || run.state === "stopped")
    return `the run has ended (it is ${run.state}).`;
  if (step.pr_number === null || step.pr_state !== "open") return "its pull request is not open.";
  const pr = await scene.gh.getPullRequest({ owner: step.owner, repo: step.repo }, step.pr_number);
  if (pr.headSha !== headSha)
    return `this head is no longer the pull request's head (it is \`${shortSha(pr.headSha)}\` now); its own check is the one to re-run.`;
  if (run.state === "blocked")
    return "the run is blocked; `/lisa fix` on the issue builds the blocked steps again, gates included.";
  if (!AT_GATE.has(run.state)) return "a pass is under way; its gates run when its agent is done.";
  return undefined;
}

/** Puts why the gates did not run again on top of what the check run pressed says. */
async function refuse(scene: Scene, gesture: CheckGesture, why: string): Promise<void> {
  const { deps, gh, ref } = scene;
  // A suite's rerequest names no check run and no output to keep: the log says it.
  if (gesture.checkRunId === null || !gesture.shown) {
    deps.log.info({ owner: ref.owner, repo: ref.repo, head: gesture.headSha, why }, "did not re-run Lisa's check suite");
    return;
  }
  const earlier = (gesture.shown.summary ?? "").startsWith(REFUSED)
    ? (gesture.shown.summary ?? "").split("\n\n").slice(1).join("\n\n")
    : (gesture.shown.summary ?? "");
  const conclusion = gesture.shown.conclusion as CheckReport["conclusion"];
  const report: CheckReport = {
    ...(conclusion && ["success", "failure", "neutral", "cancelled"].includes(conclusion) ? { conclusion } : {}),
    title: gesture.shown.title ?? CHECK_NAME,
    summary: `${REFUSED} ${why} (${mention(gesture.sender)} pressed Re-run.)${earlier ? `\n\n${earlier}` : ""}`,
  };
  await updateCheck(gh, ref, gesture.checkRunId, report);
}
