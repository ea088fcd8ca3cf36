import { branchSha, diffStats } from "./git-repos.ts";
import type { LogHost } from "./log-host.ts";
import {
  accountJson,
  commentJson,
  issueJson,
  type Links,
  labelJson,
  type PullJson,
  pullJson,
  repoJson,
} from "./representations.ts";
import {
  type Account,
  type Comment,
  type EmulatorState,
  type Issue,
  isPull,
  type PullFields,
  type PullRequest,
  type Repo,
} from "./state.ts";
import type { Delivery, WebhookSender } from "./webhooks.ts";

/** What the REST routes and the test helpers share: the state, the app's identity and the webhook sender. */
export interface EmulatorContext {
  state: EmulatorState;
  links(): Links;
  installationId: number;
  /** The installation's bot, author of everything created through the API. */
  bot: Account;
  /** The App's id, learnt from the `iss` of the last JWT seen (GitHub knows it; the emulator has to guess). */
  appId: number;
  /**
   * Installation tokens handed out, each with the time it expires (ms). The REST routes accept
   * these and nothing else; the git server accepts them only until they expire.
   */
  tokens: Map<string, number>;
  /** Personal access tokens among `tokens`, with the account each acts as (instead of the bot). */
  tokenUsers: Map<string, Account>;
  /** How long a token handed out is valid for git; an hour on GitHub. */
  tokenLifetimeMs: number;
  /** The time tokens expire by, in ms (Date.now unless a test moves it on). */
  tokenClock: () => number;
  /** How long after a push a pull request still shows its old head, as GitHub's does for a moment; 0 by default. */
  headLagMs: number;
  webhooks: WebhookSender;
  /** Where job logs are downloaded from, on URLs it signs. */
  logHost: LogHost;
  /** Whether changes made through the API send webhooks too, as on GitHub (where the bot is their sender). */
  apiWebhooks: boolean;
  /** What the installation may do, by permission (app.yml's `default_permissions`). */
  permissions: Readonly<Record<string, "read" | "write">>;
  /** The other Apps installed with `checks: write`: GitHub makes each an empty check suite at every push. */
  checksApps: readonly { id: number; slug: string }[];
  /** The events the installation receives (app.yml's `default_events`). */
  events: readonly string[];
  /** The repositories (owner/name) the installation was given, when its owner selected some; all when undefined. */
  selectedRepos?: readonly string[] | undefined;
  /** What the App's registration asks for (GET /app), which may be more than the installation accepted. */
  registered: { permissions: Readonly<Record<string, "read" | "write">>; events: readonly string[] };
}

/** The token a request authenticates with (the word after `token` or `Bearer`), "" without one. */
export function tokenOf(headers: { authorization?: string }): string {
  const [, token = ""] = (headers.authorization ?? "").split(" ");
  return token;
}

/** Who a request acts as: the person of a personal token, else the installation's bot. */
export function actorOf(context: EmulatorContext, headers: { authorization?: string }): Account {
  return context.tokenUsers.get(tokenOf(headers)) ?? context.bot;
}

/** Sends the webhook an API call causes without holding up the call's answer; `waitForWebhooks()` waits for it. */
export function emitInBackground(context: EmulatorContext, send: () => Promise<Delivery>): void {
  if (!context.apiWebhooks) return;
  // Building a payload can fail (a git error); say so rather than lose the webhook without a trace.
  context.webhooks.track(Promise.resolve().then(send)).catch((error: unknown) => {
    console.error("GitHub emulator: a webhook could not be sent:", error);
  });
}

/** A pull request's JSON with the current commits of its branches (the last seen ones for a deleted branch). */
export async function pullView(context: EmulatorContext, repo: Repo, pull: PullRequest): Promise<PullJson> {
  pull.pull.headSha = shownHead(context, pull.pull, (await branchSha(repo.gitDir, pull.pull.head)) ?? pull.pull.headSha);
  pull.pull.baseSha = (await branchSha(repo.gitDir, pull.pull.base)) ?? pull.pull.baseSha;
  // A merged pull request keeps what it changed when it was merged.
  if (!pull.pull.merged) pull.pull.stats = await diffStats(repo.gitDir, pull.pull.baseSha, pull.pull.headSha);
  return pullJson(repo, pull, context.links());
}

/** The head a pull request shows: a new commit on its branch only `headLagMs` after it was first seen there. */
function shownHead(context: EmulatorContext, pull: PullFields, live: string): string {
  if (live === pull.headSha || context.headLagMs <= 0) {
    pull.nextHead = undefined;
    return live;
  }
  if (pull.nextHead?.sha !== live) pull.nextHead = { sha: live, at: Date.now() + context.headLagMs };
  return Date.now() >= pull.nextHead.at ? live : pull.headSha;
}

/** Sends `event` with the fields every payload to an installation carries. */
export function emit(
  context: EmulatorContext,
  event: string,
  repo: Repo,
  sender: Account,
  fields: Record<string, unknown>,
): Promise<Delivery> {
  const links = context.links();
  return context.webhooks.send(event, {
    ...fields,
    repository: repoJson(repo, links),
    sender: accountJson(sender, links),
    installation: {
      id: context.installationId,
      node_id: Buffer.from(`Installation:${context.installationId}`).toString("base64"),
    },
  });
}

/**
 * `issues.labeled`/`unlabeled`, or `pull_request.labeled`/`unlabeled` when the issue is a pull
 * request: GitHub tells the two apart by event, not by a field.
 */
export async function emitLabelChange(
  context: EmulatorContext,
  repo: Repo,
  issue: Issue,
  labelName: string,
  action: "labeled" | "unlabeled",
  sender: Account,
): Promise<Delivery> {
  const label = context.state.label(repo, labelName);
  const labelField = labelJson(repo, label, context.links());
  if (isPull(issue)) {
    const pullRequest = await pullView(context, repo, issue);
    return emit(context, "pull_request", repo, sender, {
      action,
      number: issue.number,
      pull_request: pullRequest,
      label: labelField,
    });
  }
  return emit(context, "issues", repo, sender, { action, issue: issueJson(repo, issue, context.links()), label: labelField });
}

/** `issue_comment.created`/`edited`; `issue` carries `pull_request` when the comment is on one. */
export function emitComment(
  context: EmulatorContext,
  repo: Repo,
  comment: Comment,
  action: "created" | "edited",
  sender: Account,
  changes?: { body: { from: string } },
): Promise<Delivery> {
  const issue = repo.issues.get(comment.issueNumber);
  if (!issue) throw new Error(`comment ${comment.id} is on no issue`);
  const links = context.links();
  return emit(context, "issue_comment", repo, sender, {
    action,
    issue: issueJson(repo, issue, links),
    comment: commentJson(repo, comment, links),
    ...(changes ? { changes } : {}),
  });
}

/** `pull_request.<action>` for a pull request's own changes: opened, edited, closed, reopened. */
export async function emitPullChange(
  context: EmulatorContext,
  repo: Repo,
  pull: PullRequest,
  action: "opened" | "edited" | "closed" | "reopened" | "converted_to_draft" | "ready_for_review",
  sender: Account,
  changes?: Record<string, { from: string | null }>,
): Promise<Delivery> {
  const pullRequest = await pullView(context, repo, pull);
  return emit(context, "pull_request", repo, sender, {
    action,
    number: pull.number,
    pull_request: pullRequest,
    ...(changes ? { changes } : {}),
  });
}
