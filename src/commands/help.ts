/** The command list, as replies and the tracking comment show it. */
export const HELP = [
  "Lisa understands these commands, each at the start of a line of a comment, a review or an inline comment (only from people with write access):",
  "",
  '- Approve every pull request of the run to accept the work. A writer\'s "Request changes" review starts another pass with its comments as guidance.',
  "- `/lisa redirect <what to change>`: another pass on the same branches and pull requests, with your guidance.",
  "- `/lisa continue`: another pass that does the agent's own proposed refinements.",
  "- `/lisa accept`: on the issue, accept the run without approvals (needs write on every repository of the run).",
  "- `/lisa fix [notes]`: run the blocked steps again with a fresh budget (on a pull request: that step only).",
  "- `/lisa skip`: leave the blocked steps as they are and go to review.",
  "- `/lisa abort`: stop the pass under way; the pull requests keep their verified heads.",
  "- `/lisa proceed`: build a plan that waits for review (with `review.plan: true`).",
  "- `/lisa retry`: resume a run that failed on an infrastructure error, at the step that failed.",
  "- `/lisa status`: where the run stands: each pull request's review, and what Lisa waits for.",
  "- `/lisa help`: this list.",
].join("\n");
