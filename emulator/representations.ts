import {
  type Account,
  type Comment,
  type Issue,
  isPull,
  type Label,
  type PullRequest,
  type Reaction,
  type Repo,
  type Review,
  type ReviewComment,
} from "./state.ts";

/**
 * The JSON GitHub shows of each record, shared by the REST answers and the webhook payloads so the
 * two never disagree. Fields are the ones apps commonly read, not GitHub's full objects.
 */

export interface Links {
  /** The emulator's URL: the REST API and the `html_url`s both live there. */
  base: string;
  /** Where git serves `<owner>/<name>.git` over HTTP. */
  git: string;
}

export function accountJson(account: Account, links: Links) {
  const url = `${links.base}/users/${encodeURIComponent(account.login)}`;
  return {
    login: account.login,
    id: account.id,
    node_id: nodeId(account.type, account.id),
    type: account.type,
    site_admin: false,
    avatar_url: `${links.base}/avatars/u/${account.id}`,
    gravatar_id: "",
    url,
    html_url: `${links.base}/${encodeURIComponent(account.login)}`,
    ...urls(url, ACCOUNT_URLS),
  };
}

/** `<name>_url` fields GitHub puts on an object: `url` + its path (a URI template where GitHub's is one). */
function urls(url: string, paths: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(paths).map(([name, path]) => [`${name}_url`, `${url}${path}`]));
}

const ACCOUNT_URLS = {
  followers: "/followers",
  following: "/following{/other_user}",
  gists: "/gists{/gist_id}",
  starred: "/starred{/owner}{/repo}",
  subscriptions: "/subscriptions",
  organizations: "/orgs",
  repos: "/repos",
  events: "/events{/privacy}",
  received_events: "/received_events",
};

const REPO_URLS = {
  archive: "/{archive_format}{/ref}",
  assignees: "/assignees{/user}",
  blobs: "/git/blobs{/sha}",
  branches: "/branches{/branch}",
  collaborators: "/collaborators{/collaborator}",
  comments: "/comments{/number}",
  commits: "/commits{/sha}",
  compare: "/compare/{base}...{head}",
  contents: "/contents/{+path}",
  contributors: "/contributors",
  deployments: "/deployments",
  downloads: "/downloads",
  events: "/events",
  forks: "/forks",
  git_commits: "/git/commits{/sha}",
  git_refs: "/git/refs{/sha}",
  git_tags: "/git/tags{/sha}",
  hooks: "/hooks",
  issue_comment: "/issues/comments{/number}",
  issue_events: "/issues/events{/number}",
  issues: "/issues{/number}",
  keys: "/keys{/key_id}",
  labels: "/labels{/name}",
  languages: "/languages",
  merges: "/merges",
  milestones: "/milestones{/number}",
  notifications: "/notifications{?since,all,participating}",
  pulls: "/pulls{/number}",
  releases: "/releases{/id}",
  stargazers: "/stargazers",
  statuses: "/statuses/{sha}",
  subscribers: "/subscribers",
  subscription: "/subscription",
  tags: "/tags",
  teams: "/teams",
  trees: "/git/trees{/sha}",
};

export function repoJson(repo: Repo, links: Links) {
  return {
    id: repo.id,
    node_id: nodeId("Repository", repo.id),
    name: repo.name,
    full_name: repo.fullName,
    private: repo.private,
    visibility: repo.private ? "private" : "public",
    owner: accountJson(repo.owner, links),
    description: repo.description,
    fork: false,
    archived: false,
    disabled: false,
    default_branch: repo.defaultBranch,
    allow_merge_commit: repo.mergeMethods.includes("merge"),
    allow_squash_merge: repo.mergeMethods.includes("squash"),
    allow_rebase_merge: repo.mergeMethods.includes("rebase"),
    url: `${links.base}/repos/${repo.fullName}`,
    html_url: `${links.base}/${repo.fullName}`,
    clone_url: `${links.git}/${repo.fullName}.git`,
    git_url: `${links.git.replace(/^https?:/, "git:")}/${repo.fullName}.git`,
    ssh_url: `git@${new URL(links.git).hostname}:${repo.fullName}.git`,
    svn_url: `${links.base}/${repo.fullName}`,
    mirror_url: null,
    homepage: null,
    language: null,
    license: null,
    topics: [],
    size: 0,
    forks: 0,
    forks_count: 0,
    stargazers_count: 0,
    watchers: 0,
    watchers_count: 0,
    open_issues: openIssues(repo),
    open_issues_count: openIssues(repo),
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: false,
    has_discussions: false,
    ...urls(`${links.base}/repos/${repo.fullName}`, REPO_URLS),
    created_at: repo.createdAt,
    updated_at: repo.createdAt,
    pushed_at: repo.createdAt,
  };
}

const openIssues = (repo: Repo) => [...repo.issues.values()].filter((issue) => issue.state === "open").length;

export function labelJson(repo: Repo, label: Label, links: Links) {
  return {
    id: label.id,
    node_id: nodeId("Label", label.id),
    url: `${links.base}/repos/${repo.fullName}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    color: label.color,
    default: false,
    description: null,
  };
}

function issueLabels(repo: Repo, issue: Issue, links: Links) {
  return issue.labels.flatMap((name) => {
    const label = repo.labels.get(name.toLowerCase());
    return label ? [labelJson(repo, label, links)] : [];
  });
}

/** An issue as the issues API and `issues`/`issue_comment` payloads show it; pull requests carry `pull_request`. */
export function issueJson(repo: Repo, issue: Issue, links: Links) {
  const api = `${links.base}/repos/${repo.fullName}`;
  return {
    id: issue.id,
    node_id: nodeId(isPull(issue) ? "PullRequest" : "Issue", issue.id),
    number: issue.number,
    title: issue.title,
    body: issue.body,
    user: accountJson(issue.user, links),
    labels: issueLabels(repo, issue, links),
    state: issue.state,
    state_reason: issue.stateReason ?? null,
    locked: false,
    active_lock_reason: null,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: [...repo.comments.values()].filter((c) => c.issueNumber === issue.number).length,
    reactions: reactionsJson(`${api}/issues/${issue.number}/reactions`, issue.reactions),
    url: `${api}/issues/${issue.number}`,
    repository_url: api,
    labels_url: `${api}/issues/${issue.number}/labels{/name}`,
    comments_url: `${api}/issues/${issue.number}/comments`,
    events_url: `${api}/issues/${issue.number}/events`,
    html_url: `${links.base}/${repo.fullName}/${isPull(issue) ? "pull" : "issues"}/${issue.number}`,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: issue.closedAt,
    author_association: association(repo, issue.user),
    ...(isPull(issue)
      ? {
          pull_request: {
            url: `${api}/pulls/${issue.number}`,
            html_url: `${links.base}/${repo.fullName}/pull/${issue.number}`,
            merged_at: issue.pull.mergedAt,
          },
        }
      : {}),
  };
}

export function commentJson(repo: Repo, comment: Comment, links: Links) {
  return {
    id: comment.id,
    node_id: nodeId("IssueComment", comment.id),
    body: comment.body,
    user: accountJson(comment.user, links),
    url: `${links.base}/repos/${repo.fullName}/issues/comments/${comment.id}`,
    html_url: `${links.base}/${repo.fullName}/issues/${comment.issueNumber}#issuecomment-${comment.id}`,
    issue_url: `${links.base}/repos/${repo.fullName}/issues/${comment.issueNumber}`,
    reactions: reactionsJson(
      `${links.base}/repos/${repo.fullName}/issues/comments/${comment.id}/reactions`,
      comment.reactions ?? [],
    ),
    performed_via_github_app: null,
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: association(repo, comment.user),
  };
}

/** A pull request as the pulls API and `pull_request*` payloads show it, with the branches' last-seen commits. */
export function pullJson(repo: Repo, pull: PullRequest, links: Links) {
  const branch = (ref: string, sha: string) => ({
    label: `${repo.owner.login}:${ref}`,
    ref,
    sha,
    user: accountJson(repo.owner, links),
    repo: repoJson(repo, links),
  });
  return {
    id: pull.pull.id,
    node_id: nodeId("PullRequest", pull.pull.id),
    number: pull.number,
    state: pull.state,
    locked: false,
    title: pull.title,
    body: pull.body,
    user: accountJson(pull.user, links),
    labels: issueLabels(repo, pull, links),
    draft: pull.pull.draft,
    merged: pull.pull.merged,
    merged_at: pull.pull.mergedAt,
    merged_by: pull.pull.mergedBy ? accountJson(pull.pull.mergedBy, links) : null,
    commits: pull.pull.stats?.commits ?? 0,
    additions: pull.pull.stats?.additions ?? 0,
    deletions: pull.pull.stats?.deletions ?? 0,
    changed_files: pull.pull.stats?.changedFiles ?? 0,
    comments: [...repo.comments.values()].filter((c) => c.issueNumber === pull.number).length,
    review_comments: [...repo.reviewComments.values()].filter((c) => c.pullNumber === pull.number).length,
    merge_commit_sha: pull.pull.mergeCommitSha,
    mergeable: pull.state === "open" ? true : null,
    mergeable_state: pull.state !== "open" ? "unknown" : pull.pull.draft ? "draft" : "clean",
    requested_reviewers: pull.pull.requestedReviewers.map((account) => accountJson(account, links)),
    active_lock_reason: null,
    assignee: null,
    assignees: [],
    milestone: null,
    requested_teams: [],
    auto_merge: null,
    maintainer_can_modify: false,
    url: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}`,
    html_url: `${links.base}/${repo.fullName}/pull/${pull.number}`,
    issue_url: `${links.base}/repos/${repo.fullName}/issues/${pull.number}`,
    diff_url: `${links.base}/${repo.fullName}/pull/${pull.number}.diff`,
    patch_url: `${links.base}/${repo.fullName}/pull/${pull.number}.patch`,
    commits_url: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}/commits`,
    review_comments_url: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}/comments`,
    review_comment_url: `${links.base}/repos/${repo.fullName}/pulls/comments{/number}`,
    comments_url: `${links.base}/repos/${repo.fullName}/issues/${pull.number}/comments`,
    statuses_url: `${links.base}/repos/${repo.fullName}/statuses/${pull.pull.headSha}`,
    _links: hrefs({
      self: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}`,
      html: `${links.base}/${repo.fullName}/pull/${pull.number}`,
      issue: `${links.base}/repos/${repo.fullName}/issues/${pull.number}`,
      comments: `${links.base}/repos/${repo.fullName}/issues/${pull.number}/comments`,
      review_comments: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}/comments`,
      review_comment: `${links.base}/repos/${repo.fullName}/pulls/comments{/number}`,
      commits: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}/commits`,
      statuses: `${links.base}/repos/${repo.fullName}/statuses/${pull.pull.headSha}`,
    }),
    head: branch(pull.pull.head, pull.pull.headSha),
    base: branch(pull.pull.base, pull.pull.baseSha),
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    closed_at: pull.closedAt,
    author_association: association(repo, pull.user),
  };
}

export function reviewJson(repo: Repo, pull: PullRequest, review: Review, links: Links) {
  return {
    id: review.id,
    node_id: nodeId("PullRequestReview", review.id),
    user: accountJson(review.user, links),
    body: review.body,
    state: review.state,
    commit_id: review.commitId,
    submitted_at: review.submittedAt,
    html_url: `${links.base}/${repo.fullName}/pull/${pull.number}#pullrequestreview-${review.id}`,
    pull_request_url: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}`,
    _links: hrefs({
      html: `${links.base}/${repo.fullName}/pull/${pull.number}#pullrequestreview-${review.id}`,
      pull_request: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}`,
    }),
    author_association: association(repo, review.user),
  };
}

export function reviewCommentJson(repo: Repo, comment: ReviewComment, links: Links) {
  return {
    id: comment.id,
    node_id: nodeId("PullRequestReviewComment", comment.id),
    pull_request_review_id: comment.reviewId,
    in_reply_to_id: comment.inReplyTo ?? undefined,
    path: comment.path,
    line: comment.line,
    original_line: comment.line,
    side: "RIGHT",
    commit_id: comment.commitId,
    original_commit_id: comment.commitId,
    diff_hunk: comment.diffHunk,
    body: comment.body,
    user: accountJson(comment.user, links),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    html_url: `${links.base}/${repo.fullName}/pull/${comment.pullNumber}#discussion_r${comment.id}`,
    pull_request_url: `${links.base}/repos/${repo.fullName}/pulls/${comment.pullNumber}`,
    url: `${links.base}/repos/${repo.fullName}/pulls/comments/${comment.id}`,
    author_association: association(repo, comment.user),
  };
}

/** `_links` as GitHub writes them: each link an object with its `href`. */
const hrefs = (links: Record<string, string>) =>
  Object.fromEntries(Object.entries(links).map(([name, href]) => [name, { href }]));

/** The counts of each reaction on an issue or comment, as GitHub sums them up. */
function reactionsJson(url: string, reactions: readonly Reaction[]) {
  const count = (content: string) => reactions.filter((r) => r.content === content).length;
  return {
    url,
    total_count: reactions.length,
    "+1": count("+1"),
    "-1": count("-1"),
    laugh: count("laugh"),
    confused: count("confused"),
    heart: count("heart"),
    hooray: count("hooray"),
    eyes: count("eyes"),
    rocket: count("rocket"),
  };
}

export type IssueJson = ReturnType<typeof issueJson>;
export type CommentJson = ReturnType<typeof commentJson>;
export type PullJson = ReturnType<typeof pullJson>;
export type ReviewJson = ReturnType<typeof reviewJson>;

function association(repo: Repo, account: Account): string {
  if (account.login.toLowerCase() === repo.owner.login.toLowerCase()) return "OWNER";
  return repo.collaborators.has(account.login.toLowerCase()) ? "COLLABORATOR" : "NONE";
}

/** An opaque global node id in the spirit of GitHub's legacy ones. */
function nodeId(type: string, id: number): string {
  return Buffer.from(`${type}:${id}`).toString("base64").replace(/=+$/, "");
}
