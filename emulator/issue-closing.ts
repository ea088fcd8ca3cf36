import { type EmulatorContext, emit } from "./context.ts";
import { issueJson } from "./representations.ts";
import { type Account, isPull, now, type PullRequest, type Repo } from "./state.ts";
import type { Delivery } from "./webhooks.ts";

/** GitHub's closing keywords: a PR merged into the default branch closes the issues its body names with them. */
const CLOSING = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:([\w.-]+\/[\w.-]+))?#(\d+)\b/gi;

/** Closes an issue as `sender` and sends `issues.closed`, its delivery; an issue closed already is left as it is. */
export async function closeIssue(
  context: EmulatorContext,
  repo: Repo,
  number: number,
  sender: Account,
  reason: "completed" | "not_planned" = "completed",
): Promise<Delivery | undefined> {
  const issue = repo.issues.get(number);
  if (!issue || isPull(issue) || issue.state === "closed") return undefined;
  issue.state = "closed";
  issue.stateReason = reason;
  issue.closedAt = now();
  issue.updatedAt = issue.closedAt;
  return emit(context, "issues", repo, sender, { action: "closed", issue: issueJson(repo, issue, context.links()) });
}

/**
 * What GitHub does when `pull` is merged into its repository's default branch: each issue its body
 * names with a closing keyword ("Closes #12", "fixes acme/api#3") is closed, as the merger.
 */
export async function closeIssuesOnMerge(
  context: EmulatorContext,
  repo: Repo,
  pull: PullRequest,
  merger: Account,
): Promise<void> {
  if (pull.pull.base !== repo.defaultBranch) return;
  for (const [, fullName, number] of (pull.body ?? "").matchAll(CLOSING)) {
    const [owner, name] = fullName ? fullName.split("/") : [repo.owner.login, repo.name];
    const target = context.state.findRepo(owner ?? "", name ?? "");
    if (target) await closeIssue(context, target, Number(number), merger);
  }
}
