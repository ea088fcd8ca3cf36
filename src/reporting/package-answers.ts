import { describePrGate } from "./describe-pr-gate.ts";
import { plural } from "./format.ts";
import type { PackageView } from "./package-view.ts";

const MAX_SIBLINGS = 10;

/** The gestures that answer this package, by phase. */
export function answers(view: PackageView): string {
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
