/** What a stopped run can do next, from what it has: the passes left, the agent's refinements and its open pull requests. */
export interface StoppedRun {
  pass: number;
  maxPasses: number;
  /** The stopped pass proposed refinements, so `/lisa continue` has something to do. */
  canContinue: boolean;
  /** The open pull requests, each already rendered as a reference (`acme/api#5`, a link). */
  openPullRequests: string[];
}

/**
 * The choices after `/lisa abort` (or a stop by a closed pull request), only those that work: a
 * redirect while passes are left, continue only with refinements, approving or closing only the
 * pull requests that are open.
 */
export function choicesAfterStop(run: StoppedRun): string[] {
  const choices: string[] = [];
  if (run.pass < run.maxPasses) {
    const start = run.canContinue ? "`/lisa redirect <guidance>` or `/lisa continue`" : "`/lisa redirect <guidance>`";
    choices.push(`${start} to start pass ${run.pass + 1}`);
  } else {
    choices.push(
      `pass ${run.pass} of ${run.maxPasses} was the last: raise \`limits.max_passes\` in \`.github/lisa.yml\` for another`,
    );
  }
  const prs = run.openPullRequests;
  if (prs.length) {
    const them = prs.length === 1 ? "it" : "them";
    choices.push(
      `approve ${prs.join(", ")} to accept ${them} as ${prs.length === 1 ? "it stands" : "they stand"}, or close ${them} to end the run`,
    );
  }
  return choices;
}
