import { randomBytes } from "node:crypto";
import { branchRuleRoutes } from "./branch-rules.ts";
import { checkRunRoutes, PASSING_CONCLUSIONS } from "./check-runs.ts";
import { ciRoutes } from "./ci-runs.ts";
import {
  actorOf,
  type EmulatorContext,
  emit,
  emitComment,
  emitInBackground,
  emitLabelChange,
  emitPullChange,
  pullView,
  tokenOf,
} from "./context.ts";
import { deliveryLog, redeliverAttempt } from "./delivery-log.ts";
import {
  branchSha,
  changedPaths,
  commitsAhead,
  MERGE_METHODS,
  type MergeMethod,
  mergeBranches,
  readPath,
  type TreeEntry,
} from "./git-repos.ts";
import { closeIssue, closeIssuesOnMerge } from "./issue-closing.ts";
import { paginate } from "./paginate.ts";
import { accountJson, commentJson, issueJson, labelJson, repoJson, reviewCommentJson, reviewJson } from "./representations.ts";
import {
  HttpError,
  notFound,
  type Route,
  type RouteRequest,
  type RouteResponse,
  route,
  stringField,
  validationFailed,
} from "./router.ts";
import { type Account, type Issue, isPull, now, type PullRequest, type Reaction, type Repo, type Role } from "./state.ts";

const REACTIONS = ["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"];

/**
 * The REST API the emulator answers, as a table. `/app` routes want the App's JWT (any will do);
 * every other route wants an installation token the emulator handed out, and a repository it knows.
 */
export function restRoutes(context: EmulatorContext): Route[] {
  const { state } = context;

  /** A route authenticated as the App. The JWT is not verified; its `iss` tells the App's id. */
  const appRoute = (method: string, pattern: string, handler: (request: RouteRequest) => RouteResponse) =>
    route(method, pattern, (request) => {
      const [scheme, jwt = ""] = (request.headers.authorization ?? "").split(" ");
      if (scheme?.toLowerCase() !== "bearer") throw new HttpError(401, "A JSON web token could not be decoded");
      const issuer = Number(decodeJwtPayload(jwt)?.iss);
      if (Number.isInteger(issuer) && issuer > 0) context.appId = issuer;
      return handler(request);
    });

  /** The request's token, one the emulator handed out (an installation's or a person's), or GitHub's 401. */
  const authenticated = (request: RouteRequest): string => {
    const token = tokenOf(request.headers);
    if (!context.tokens.has(token)) throw new HttpError(401, "Bad credentials");
    return token;
  };

  /** A route on one repository, authenticated as the installation. */
  const repoRoute = (
    method: string,
    pattern: string,
    handler: (request: RouteRequest, repo: Repo) => RouteResponse | Promise<RouteResponse>,
  ) =>
    route(method, `/repos/:owner/:repo${pattern}`, (request) => {
      authenticated(request);
      const repo = state.findRepo(request.params.owner ?? "", request.params.repo ?? "");
      if (!repo) throw notFound();
      return handler(request, repo);
    });

  const issueOf = (repo: Repo, request: RouteRequest): Issue => {
    const issue = repo.issues.get(numberParam(request.params.number));
    if (!issue) throw notFound();
    return issue;
  };
  const pullOf = (repo: Repo, request: RouteRequest): PullRequest => {
    const issue = issueOf(repo, request);
    if (!isPull(issue)) throw notFound();
    return issue;
  };
  const labelsOf = (repo: Repo, issue: Issue) =>
    issue.labels.map((name) => labelJson(repo, state.label(repo, name), context.links()));
  const touch = (issue: Issue) => {
    issue.updatedAt = now();
  };

  return [
    ...checkRunRoutes(context, repoRoute),
    ...branchRuleRoutes(repoRoute, () => context.links().base),
    ...ciRoutes(context, repoRoute),

    /** The token's person; an installation token is not one (GitHub answers it 403). */
    route("GET", "/user", (request) => {
      const user = context.tokenUsers.get(authenticated(request));
      if (!user) throw new HttpError(403, "Resource not accessible by integration");
      return { status: 200, body: accountJson(user, context.links()) };
    }),

    /** The repositories the installation was given: all of its owner's, or those its owner selected. */
    route("GET", "/installation/repositories", (request) => {
      if (context.tokenUsers.has(authenticated(request)))
        throw new HttpError(403, "Resource not accessible by personal access token");
      const repos = [...context.state.repos.values()].filter(
        (repo) => !context.selectedRepos || context.selectedRepos.includes(repo.fullName),
      );
      const repositories = repos.map((repo) => repoJson(repo, context.links()));
      return paginate(repositories, request, context.links().base, {
        wrap: (page) => ({
          total_count: repositories.length,
          repository_selection: installationJson(context).repository_selection,
          repositories: page,
        }),
      });
    }),

    appRoute("GET", "/app", () => ({
      status: 200,
      body: { id: context.appId, slug: "lisa", name: "Lisa", ...context.registered },
    })),

    appRoute("GET", "/app/installations", () => ({ status: 200, body: [installationJson(context)] })),

    appRoute("GET", "/app/hook/deliveries", (request) => deliveryLog(context, request, context.links().base)),

    appRoute("POST", "/app/hook/deliveries/:id/attempts", (request) => {
      const answer = redeliverAttempt(context, numberParam(request.params.id));
      if (!answer) throw notFound();
      return answer;
    }),

    appRoute("GET", "/app/installations/:id", (request) => {
      if (numberParam(request.params.id) !== context.installationId) throw notFound();
      return { status: 200, body: installationJson(context) };
    }),

    appRoute("POST", "/app/installations/:id/access_tokens", (request) => {
      if (numberParam(request.params.id) !== context.installationId) throw notFound();
      const token = newToken();
      const expires = context.tokenClock() + context.tokenLifetimeMs;
      context.tokens.set(token, expires);
      const expiresAt = new Date(expires).toISOString().replace(/\.\d{3}Z$/, "Z");
      return {
        status: 201,
        body: {
          token,
          expires_at: expiresAt,
          permissions: context.permissions,
          repository_selection: installationJson(context).repository_selection,
        },
      };
    }),

    repoRoute("GET", "", (_request, repo) => ({ status: 200, body: repoJson(repo, context.links()) })),

    repoRoute("GET", "/contents/*path", async (request, repo): Promise<RouteResponse> => {
      const filePath = request.params.path ?? "";
      const ref = request.query.get("ref") ?? repo.defaultBranch;
      const found = await readPath(repo.gitDir, ref, filePath);
      if (!found) throw notFound();
      const links = context.links();
      const entryJson = (entry: TreeEntry) => ({
        type: entry.type,
        name: entry.name,
        path: entry.path,
        sha: entry.sha,
        size: entry.size,
        url: `${links.base}/repos/${repo.fullName}/contents/${entry.path}?ref=${encodeURIComponent(ref)}`,
        html_url: `${links.base}/${repo.fullName}/blob/${ref}/${entry.path}`,
        download_url: entry.type === "file" ? `${links.base}/${repo.fullName}/raw/${ref}/${entry.path}` : null,
      });
      // Directories are JSON whatever was asked for, which is how Probot's config loader recognises them.
      if (found.type === "dir") return { status: 200, body: found.entries.map(entryJson) };
      if (/application\/vnd\.github(\.v3)?\.raw/.test(String(request.headers.accept))) {
        // GitHub's ETag changes with the content; a request that holds it gets a 304, free of rate limit.
        const etag = `W/"${found.entry.sha}"`;
        if (request.headers["if-none-match"] === etag) return { status: 304, headers: { etag } };
        return {
          status: 200,
          body: found.content.toString("utf8"),
          headers: { "content-type": "application/vnd.github.raw; charset=utf-8", etag },
        };
      }
      return {
        status: 200,
        // GitHub wraps the base64 at 60 characters.
        body: {
          ...entryJson(found.entry),
          encoding: "base64",
          content: found.content.toString("base64").replace(/.{60}/g, "$&\n"),
        },
      };
    }),

    /**
     * GitHub answers a non-collaborator of a public repository with `read` (anyone may read it).
     * For a private repository the emulator answers 404, as GitHub does for a user it cannot show,
     * which Lisa's port reads as no access. The owner of a user-owned repository is its admin.
     */
    repoRoute("GET", "/collaborators/:username/permission", (request, repo) => {
      const login = request.params.username ?? "";
      const isOwner = repo.owner.type === "User" && repo.owner.login.toLowerCase() === login.toLowerCase();
      const collaborator = repo.collaborators.get(login.toLowerCase());
      let role: Role;
      if (isOwner) role = "admin";
      else if (collaborator) role = collaborator.role;
      else if (repo.private) throw notFound();
      else role = "read";
      const rank = ["read", "triage", "write", "maintain", "admin"].indexOf(role);
      const permissions = { pull: rank >= 0, triage: rank >= 1, push: rank >= 2, maintain: rank >= 3, admin: rank >= 4 };
      return {
        status: 200,
        body: {
          // The legacy field knows only admin, write and read.
          permission: role === "maintain" ? "write" : role === "triage" ? "read" : role,
          role_name: role,
          user: { ...accountJson(state.account(login), context.links()), permissions, role_name: role },
        },
      };
    }),

    repoRoute("GET", "/issues/:number", (request, repo) => ({
      status: 200,
      body: issueJson(repo, issueOf(repo, request), context.links()),
    })),

    /** Closes or reopens an issue (`state`, with `state_reason`); Lisa closes one whose plan's last PR merged. */
    repoRoute("PATCH", "/issues/:number", async (request, repo) => {
      const issue = issueOf(repo, request);
      const { state: wanted, state_reason: reason } = (request.body ?? {}) as { state?: unknown; state_reason?: unknown };
      if (wanted !== undefined && wanted !== "open" && wanted !== "closed")
        throw validationFailed("Issue", { field: "state", code: "invalid" });
      if (wanted === "closed")
        await closeIssue(
          context,
          repo,
          issue.number,
          actorOf(context, request.headers),
          reason === "not_planned" ? "not_planned" : "completed",
        );
      if (wanted === "open" && issue.state === "closed") {
        issue.state = "open";
        issue.stateReason = "reopened";
        issue.closedAt = null;
        touch(issue);
      }
      return { status: 200, body: issueJson(repo, issue, context.links()) };
    }),

    repoRoute("GET", "/issues/:number/comments", (request, repo) => {
      const issue = issueOf(repo, request);
      const comments = [...repo.comments.values()].filter((comment) => comment.issueNumber === issue.number);
      return paginate(
        comments.map((comment) => commentJson(repo, comment, context.links())),
        request,
        context.links().base,
      );
    }),

    repoRoute("POST", "/issues/:number/comments", (request, repo) => {
      const issue = issueOf(repo, request);
      const body = stringField(request.body, "body", "IssueComment");
      const comment = {
        id: state.nextId(),
        issueNumber: issue.number,
        body,
        user: actorOf(context, request.headers),
        createdAt: now(),
        updatedAt: now(),
      };
      repo.comments.set(comment.id, comment);
      touch(issue);
      emitInBackground(context, () => emitComment(context, repo, comment, "created", actorOf(context, request.headers)));
      const json = commentJson(repo, comment, context.links());
      return { status: 201, body: json, headers: { location: json.url } };
    }),

    repoRoute("PATCH", "/issues/comments/:id", (request, repo) => {
      const comment = repo.comments.get(numberParam(request.params.id));
      if (!comment) throw notFound();
      const body = stringField(request.body, "body", "IssueComment");
      const from = comment.body;
      comment.body = body;
      comment.updatedAt = now();
      emitInBackground(context, () =>
        emitComment(context, repo, comment, "edited", actorOf(context, request.headers), { body: { from } }),
      );
      return { status: 200, body: commentJson(repo, comment, context.links()) };
    }),

    /** Reacting twice with the same content answers 200 with the first reaction, like GitHub. */
    repoRoute("POST", "/issues/:number/reactions", (request, repo) => {
      const issue = issueOf(repo, request);
      const content = (request.body as { content?: unknown } | undefined)?.content;
      if (typeof content !== "string" || !REACTIONS.includes(content)) {
        throw validationFailed("Reaction", { field: "content", code: "invalid" });
      }
      const existing = issue.reactions.find((r) => r.content === content && r.user.id === actorOf(context, request.headers).id);
      const reaction = existing ?? { id: state.nextId(), content, user: actorOf(context, request.headers), createdAt: now() };
      if (!existing) issue.reactions.push(reaction);
      const links = context.links();
      return {
        status: existing ? 200 : 201,
        body: { id: reaction.id, content, user: accountJson(reaction.user, links), created_at: reaction.createdAt },
      };
    }),

    repoRoute("GET", "/issues/:number/labels", (request, repo) =>
      paginate(labelsOf(repo, issueOf(repo, request)), request, context.links().base),
    ),

    /** Accepts `{labels: [...]}` or a bare array, of names or `{name}` objects; unknown labels are created. */
    repoRoute("POST", "/issues/:number/labels", (request, repo) => {
      const issue = issueOf(repo, request);
      for (const name of labelNames(request.body)) {
        if (issue.labels.some((label) => label.toLowerCase() === name.toLowerCase())) continue;
        const label = state.label(repo, name);
        issue.labels.push(label.name);
        touch(issue);
        emitInBackground(context, () =>
          emitLabelChange(context, repo, issue, label.name, "labeled", actorOf(context, request.headers)),
        );
      }
      return { status: 200, body: labelsOf(repo, issue) };
    }),

    /** Replaces all the labels of an issue with the given ones, each change sent as its own webhook. */
    repoRoute("PUT", "/issues/:number/labels", (request, repo) => {
      const issue = issueOf(repo, request);
      const wanted = labelNames(request.body).map((name) => state.label(repo, name).name);
      const has = (names: string[], name: string) => names.some((n) => n.toLowerCase() === name.toLowerCase());
      const removed = issue.labels.filter((name) => !has(wanted, name));
      const added = wanted.filter((name, i) => !has(issue.labels, name) && !has(wanted.slice(0, i), name));
      issue.labels = issue.labels.filter((name) => has(wanted, name)).concat(added);
      if (removed.length || added.length) touch(issue);
      for (const name of removed)
        emitInBackground(context, () =>
          emitLabelChange(context, repo, issue, name, "unlabeled", actorOf(context, request.headers)),
        );
      for (const name of added)
        emitInBackground(context, () =>
          emitLabelChange(context, repo, issue, name, "labeled", actorOf(context, request.headers)),
        );
      return { status: 200, body: labelsOf(repo, issue) };
    }),

    repoRoute("DELETE", "/issues/:number/labels/:name", (request, repo) => {
      const issue = issueOf(repo, request);
      const wanted = (request.params.name ?? "").toLowerCase();
      const index = issue.labels.findIndex((label) => label.toLowerCase() === wanted);
      if (index === -1) throw new HttpError(404, "Label does not exist");
      const [removed = ""] = issue.labels.splice(index, 1);
      touch(issue);
      emitInBackground(context, () =>
        emitLabelChange(context, repo, issue, removed, "unlabeled", actorOf(context, request.headers)),
      );
      return { status: 200, body: labelsOf(repo, issue) };
    }),

    /** `head` filters by `owner:branch` (a bare branch name is accepted too); newest first, as GitHub sorts. */
    repoRoute("GET", "/pulls", async (request, repo) => {
      const wantedState = request.query.get("state") ?? "open";
      const head = request.query.get("head");
      const [headOwner, headRef] = head?.includes(":") ? splitHead(head) : [repo.owner.login, head];
      const base = request.query.get("base");
      const pulls = [...repo.issues.values()]
        .filter(isPull)
        .filter((pull) => wantedState === "all" || pull.state === wantedState)
        .filter((pull) => headRef === null || (sameLogin(headOwner, repo.owner.login) && pull.pull.head === headRef))
        .filter((pull) => base === null || pull.pull.base === base)
        .sort((a, b) => b.number - a.number);
      const views = [];
      for (const pull of pulls) views.push(await pullView(context, repo, pull));
      return paginate(views, request, context.links().base);
    }),

    /**
     * Opens a pull request from a branch of the same repository (forks are not emulated). Like GitHub,
     * refuses a head or base branch that does not exist, a second open PR for the same head and base,
     * and a head with no commits the base lacks.
     */
    repoRoute("POST", "/pulls", async (request, repo) => {
      const input = (request.body ?? {}) as { title?: unknown; body?: unknown; head?: unknown; base?: unknown; draft?: unknown };
      const head = stringField(input, "head", "PullRequest");
      const base = stringField(input, "base", "PullRequest");
      const [headOwner, headRef] = head.includes(":") ? splitHead(head) : [repo.owner.login, head];
      const headSha = sameLogin(headOwner, repo.owner.login) ? await branchSha(repo.gitDir, headRef) : undefined;
      if (!headSha) throw validationFailed("PullRequest", { field: "head", code: "invalid" });
      const baseSha = await branchSha(repo.gitDir, base);
      if (!baseSha) throw validationFailed("PullRequest", { field: "base", code: "invalid" });
      const open = openPullFor(repo, headRef, base);
      if (open) {
        const message = `A pull request already exists for ${repo.owner.login}:${headRef}.`;
        throw validationFailed("PullRequest", { code: "custom", message });
      }
      if ((await commitsAhead(repo.gitDir, base, headRef)) === 0) {
        throw validationFailed("PullRequest", { code: "custom", message: `No commits between ${base} and ${headRef}` });
      }
      if (input.draft === true && !repo.draftPullRequests) {
        throw validationFailed("PullRequest", {
          code: "custom",
          message: "Draft pull requests are not supported in this repository.",
        });
      }
      const title = stringField(input, "title", "PullRequest");
      const created = now();
      const pull: PullRequest = {
        id: state.nextId(),
        number: repo.nextNumber++,
        title,
        body: typeof input.body === "string" ? input.body : null,
        user: actorOf(context, request.headers),
        labels: [],
        state: "open",
        reactions: [],
        pull: {
          id: state.nextId(),
          head: headRef,
          base,
          draft: input.draft === true,
          headSha,
          baseSha,
          reviews: [],
          merged: false,
          mergedAt: null,
          mergeCommitSha: null,
          requestedReviewers: [],
        },
        createdAt: created,
        updatedAt: created,
        closedAt: null,
      };
      repo.issues.set(pull.number, pull);
      emitInBackground(context, () => emitPullChange(context, repo, pull, "opened", actorOf(context, request.headers)));
      const json = await pullView(context, repo, pull);
      return { status: 201, body: json, headers: { location: json.url } };
    }),

    repoRoute("GET", "/pulls/:number", async (request, repo) => ({
      status: 200,
      body: await pullView(context, repo, pullOf(repo, request)),
    })),

    /** Changes title, body, base and state; `edited` lists what changed, and closing or reopening has its own event. */
    repoRoute("PATCH", "/pulls/:number", async (request, repo) => {
      const pull = pullOf(repo, request);
      const input = (request.body ?? {}) as { title?: unknown; body?: unknown; state?: unknown; base?: unknown };
      if (input.state !== undefined && input.state !== "open" && input.state !== "closed") {
        throw validationFailed("PullRequest", { field: "state", code: "invalid" });
      }
      if (typeof input.base === "string" && !(await branchSha(repo.gitDir, input.base))) {
        throw validationFailed("PullRequest", { field: "base", code: "invalid" });
      }
      if (input.state === "open" && pull.state === "closed") {
        const open = openPullFor(repo, pull.pull.head, typeof input.base === "string" ? input.base : pull.pull.base);
        if (open) {
          const message = `A pull request already exists for ${repo.owner.login}:${pull.pull.head}.`;
          throw validationFailed("PullRequest", { code: "custom", message });
        }
      }
      const changes: Record<string, { from: string | null }> = {};
      if (typeof input.title === "string" && input.title !== pull.title) {
        changes.title = { from: pull.title };
        pull.title = input.title;
      }
      if (typeof input.body === "string" && input.body !== pull.body) {
        changes.body = { from: pull.body };
        pull.body = input.body;
      }
      if (typeof input.base === "string" && input.base !== pull.pull.base) {
        changes.base = { from: pull.pull.base };
        pull.pull.base = input.base;
      }
      const stateChange = typeof input.state === "string" && input.state !== pull.state ? input.state : undefined;
      if (stateChange) {
        pull.state = stateChange;
        pull.closedAt = stateChange === "closed" ? now() : null;
      }
      touch(pull);
      if (Object.keys(changes).length > 0) {
        emitInBackground(context, () =>
          emitPullChange(context, repo, pull, "edited", actorOf(context, request.headers), changes),
        );
      }
      if (stateChange) {
        const action = stateChange === "closed" ? "closed" : "reopened";
        emitInBackground(context, () => emitPullChange(context, repo, pull, action, actorOf(context, request.headers)));
      }
      return { status: 200, body: await pullView(context, repo, pull) };
    }),

    /**
     * Just enough GraphQL for what REST cannot do: turning a pull request into a draft and back.
     * Anything else gets GraphQL's error shape with status 200, as GitHub answers it.
     */
    route("POST", "/graphql", async (request) => {
      authenticated(request);
      const { query = "", variables = {} } = (request.body ?? {}) as { query?: string; variables?: Record<string, unknown> };
      if (/\breviewDecision\b/.test(query) && /\brepository\s*\(/.test(query)) {
        const repo = state.findRepo(String(variables.owner ?? ""), String(variables.name ?? ""));
        const issue = repo?.issues.get(Number(variables.number));
        if (!repo || !issue || !isPull(issue)) {
          return { status: 200, body: { data: { repository: repo ? { pullRequest: null } : null } } };
        }
        const view = await pullView(context, repo, issue);
        return {
          status: 200,
          body: { data: { repository: { pullRequest: { reviewDecision: reviewDecision(repo, issue, view.head.sha) } } } },
        };
      }
      const mutation = /\b(markPullRequestReadyForReview|convertPullRequestToDraft)\s*\(/.exec(query)?.[1];
      if (!mutation) return { status: 200, body: { errors: [{ message: "The GitHub emulator does not support this query." }] } };
      const id = String(variables.id ?? /pullRequestId:\s*"([^"]+)"/.exec(query)?.[1] ?? "");
      for (const repo of state.repos.values()) {
        for (const issue of repo.issues.values()) {
          if (!isPull(issue)) continue;
          const view = await pullView(context, repo, issue);
          if (view.node_id !== id) continue;
          const draft = mutation === "convertPullRequestToDraft";
          if (issue.pull.draft !== draft) {
            issue.pull.draft = draft;
            const action = draft ? "converted_to_draft" : "ready_for_review";
            emitInBackground(context, () => emitPullChange(context, repo, issue, action, actorOf(context, request.headers)));
          }
          return { status: 200, body: { data: { [mutation]: { pullRequest: { id, isDraft: draft } } } } };
        }
      }
      return {
        status: 200,
        body: { errors: [{ type: "NOT_FOUND", message: `Could not resolve to a node with the global id of '${id}'` }] },
      };
    }),

    repoRoute("GET", "/pulls/:number/reviews", (request, repo) => {
      const pull = pullOf(repo, request);
      return paginate(
        pull.pull.reviews.map((review) => reviewJson(repo, pull, review, context.links())),
        request,
        context.links().base,
      );
    }),

    repoRoute("GET", "/pulls/:number/reviews/:id/comments", (request, repo) => {
      const pull = pullOf(repo, request);
      const reviewId = numberParam(request.params.id);
      if (!pull.pull.reviews.some((review) => review.id === reviewId)) throw notFound();
      const comments = [...repo.reviewComments.values()].filter((c) => c.reviewId === reviewId);
      return paginate(
        comments.map((c) => reviewCommentJson(repo, c, context.links())),
        request,
        context.links().base,
      );
    }),

    /** Inline comments of a pull request, oldest first; `since` keeps those updated at or after it. */
    repoRoute("GET", "/pulls/:number/comments", (request, repo) => {
      const pull = pullOf(repo, request);
      const since = request.query.get("since");
      const comments = [...repo.reviewComments.values()]
        .filter((c) => c.pullNumber === pull.number)
        .filter((c) => since === null || c.updatedAt >= since.replace(/\.\d{3}Z$/, "Z"));
      return paginate(
        comments.map((c) => reviewCommentJson(repo, c, context.links())),
        request,
        context.links().base,
      );
    }),

    /** A reply in an inline comment's thread: to its first comment only (GitHub: "replies to replies are not supported"). */
    repoRoute("POST", "/pulls/:number/comments/:id/replies", (request, repo) => {
      const pull = pullOf(repo, request);
      const parent = repo.reviewComments.get(numberParam(request.params.id));
      if (!parent || parent.pullNumber !== pull.number) throw notFound();
      if (parent.inReplyTo !== null)
        throw validationFailed("PullRequestReviewComment", { field: "in_reply_to", code: "invalid" });
      const body = stringField(request.body, "body", "PullRequestReviewComment");
      const created = now();
      const reply = {
        id: state.nextId(),
        reviewId: null,
        pullNumber: pull.number,
        path: parent.path,
        line: parent.line,
        body,
        user: actorOf(context, request.headers),
        commitId: parent.commitId,
        diffHunk: parent.diffHunk,
        inReplyTo: parent.id,
        reactions: [],
        createdAt: created,
        updatedAt: created,
      };
      repo.reviewComments.set(reply.id, reply);
      const json = reviewCommentJson(repo, reply, context.links());
      emitInBackground(context, async () =>
        emit(context, "pull_request_review_comment", repo, actorOf(context, request.headers), {
          action: "created",
          comment: json,
          pull_request: await pullView(context, repo, pull),
        }),
      );
      return { status: 201, body: json };
    }),

    repoRoute("POST", "/issues/comments/:id/reactions", (request, repo) => {
      const comment = repo.comments.get(numberParam(request.params.id));
      if (!comment) throw notFound();
      comment.reactions ??= [];
      return react(comment.reactions, request);
    }),

    repoRoute("POST", "/pulls/comments/:id/reactions", (request, repo) => {
      const comment = repo.reviewComments.get(numberParam(request.params.id));
      if (!comment) throw notFound();
      return react(comment.reactions, request);
    }),

    /** Asking someone for review; the PR's author cannot be asked, as on GitHub. */
    repoRoute("POST", "/pulls/:number/requested_reviewers", async (request, repo) => {
      const pull = pullOf(repo, request);
      const logins = (request.body as { reviewers?: unknown } | undefined)?.reviewers;
      if (!Array.isArray(logins) || !logins.every((l): l is string => typeof l === "string")) {
        throw validationFailed("PullRequest", { field: "reviewers", code: "invalid" });
      }
      if (logins.some((login) => login.toLowerCase() === pull.user.login.toLowerCase())) {
        throw validationFailed("PullRequest", {
          code: "custom",
          message: "Review cannot be requested from pull request author.",
        });
      }
      for (const login of logins) {
        const account = state.account(login);
        if (!pull.pull.requestedReviewers.some((a) => a.id === account.id)) pull.pull.requestedReviewers.push(account);
      }
      return { status: 201, body: await pullView(context, repo, pull) };
    }),

    /**
     * Merges as `merge_method` says (a merge commit unless told). Like GitHub: 409 when `sha` is not
     * the head (it moved since it was approved); 405 when the PR is closed, a draft, conflicts with
     * its base, asks for a method the repository disallows, or lacks the checks or approvals the
     * base branch's rules require; 403 when an App without `workflows: write` would write a workflow.
     */
    repoRoute("PUT", "/pulls/:number/merge", async (request, repo) => {
      const pull = pullOf(repo, request);
      const input = (request.body ?? {}) as { sha?: unknown; merge_method?: unknown };
      const method = input.merge_method ?? "merge";
      if (!MERGE_METHODS.includes(method as MergeMethod))
        throw validationFailed("PullRequest", { field: "merge_method", code: "invalid" });
      const view = await pullView(context, repo, pull);
      if (typeof input.sha === "string" && input.sha !== view.head.sha) {
        throw new HttpError(409, "Head branch was modified. Review and try the merge again.");
      }
      if (pull.state !== "open" || pull.pull.draft) throw new HttpError(405, "Pull Request is not mergeable");
      if (!repo.mergeMethods.includes(method as MergeMethod)) throw new HttpError(405, DISALLOWED_METHOD[method as MergeMethod]);
      const unmet = protectionUnmet(repo, pull, view.head.sha);
      if (unmet) throw new HttpError(405, unmet);
      const person = context.tokenUsers.has(tokenOf(request.headers));
      if (!person && context.permissions.workflows !== "write") {
        const workflow = (await changedPaths(repo.gitDir, pull.pull.base, pull.pull.head)).find((file) =>
          file.startsWith(".github/workflows/"),
        );
        if (workflow)
          throw new HttpError(
            403,
            `refusing to allow a GitHub App to create or update workflow \`${workflow}\` without \`workflows\` permission`,
          );
      }
      const merged = await mergeBranches(
        repo.gitDir,
        pull.pull.base,
        pull.pull.head,
        `Merge pull request #${pull.number}`,
        method as MergeMethod,
      );
      if (!merged) throw new HttpError(405, "Pull Request is not mergeable");
      const merger = actorOf(context, request.headers);
      markMerged(pull, merged, merger);
      emitInBackground(context, async () => {
        const delivery = await emitPullChange(context, repo, pull, "closed", merger);
        await closeIssuesOnMerge(context, repo, pull, merger);
        return delivery;
      });
      return { status: 200, body: { sha: merged, merged: true, message: "Pull Request successfully merged" } };
    }),
  ];

  function react(reactions: Reaction[], request: RouteRequest): RouteResponse {
    const content = (request.body as { content?: unknown } | undefined)?.content;
    if (typeof content !== "string" || !REACTIONS.includes(content)) {
      throw validationFailed("Reaction", { field: "content", code: "invalid" });
    }
    const existing = reactions.find((r) => r.content === content && r.user.id === actorOf(context, request.headers).id);
    const reaction = existing ?? { id: state.nextId(), content, user: actorOf(context, request.headers), createdAt: now() };
    if (!existing) reactions.push(reaction);
    return {
      status: existing ? 200 : 201,
      body: { id: reaction.id, content, user: accountJson(reaction.user, context.links()), created_at: reaction.createdAt },
    };
  }
}

/** What GitHub answers a merge method the repository's settings disallow. */
const DISALLOWED_METHOD: Record<MergeMethod, string> = {
  merge: "Merge commits are not allowed on this repository.",
  squash: "Squash merges are not allowed on this repository.",
  rebase: "Rebase merges are not allowed on this repository.",
};

/**
 * What the base branch's protection or ruleset still asks of `pull` at `head` before a merge, in
 * GitHub's words; undefined when nothing. Rules are kept on the default branch only (as the
 * emulator keeps them).
 */
function protectionUnmet(repo: Repo, pull: PullRequest, head: string): string | undefined {
  if (pull.pull.base !== repo.defaultBranch) return undefined;
  for (const name of new Set([...(repo.requiredChecks ?? []), ...(repo.rulesetChecks ?? [])])) {
    const run = [...repo.checkRuns.values()].filter((r) => r.headSha === head && r.name === name).sort((a, b) => b.id - a.id)[0];
    const status = repo.statuses.filter((s) => s.sha === head && s.context === name).at(-1);
    const passed = (run?.status === "completed" && PASSING_CONCLUSIONS.has(run.conclusion ?? "")) || status?.state === "success";
    if (!passed) return `Required status check "${name}" is ${run || status ? "failing" : "expected"}.`;
  }
  const required = repo.requiredApprovals;
  if (required && reviewDecision(repo, pull, head) !== "APPROVED") {
    return `At least ${required} approving review${required === 1 ? " is" : "s are"} required by reviewers with write access.`;
  }
  return undefined;
}

/**
 * GitHub's `reviewDecision` under a branch rule requiring `requiredApprovals` approvals: null
 * without a rule; a change request wins; approvals count only at the head (stale ones are dismissed).
 */
function reviewDecision(repo: Repo, pull: PullRequest, head: string): string | null {
  if (!repo.requiredApprovals) return null;
  const latest = new Map<number, { state: string; commitId: string }>();
  for (const review of pull.pull.reviews) {
    if (review.state !== "COMMENTED") latest.set(review.user.id, review);
  }
  const decisions = [...latest.values()];
  if (decisions.some((r) => r.state === "CHANGES_REQUESTED")) return "CHANGES_REQUESTED";
  const approvals = decisions.filter((r) => r.state === "APPROVED" && r.commitId === head).length;
  return approvals >= repo.requiredApprovals ? "APPROVED" : "REVIEW_REQUIRED";
}

/** A merged pull request is closed and keeps its merge commit. */
export function markMerged(pull: PullRequest, mergeCommitSha: string, merger: Account): void {
  pull.pull.mergedBy = merger;
  pull.state = "closed";
  pull.closedAt = now();
  pull.updatedAt = pull.closedAt;
  pull.pull.merged = true;
  pull.pull.mergedAt = pull.closedAt;
  pull.pull.mergeCommitSha = mergeCommitSha;
}

function installationJson(context: EmulatorContext) {
  const [first] = context.state.repos.values();
  return {
    id: context.installationId,
    app_id: context.appId,
    app_slug: "lisa",
    account: first ? accountJson(first.owner, context.links()) : null,
    target_type: first?.owner.type ?? "User",
    repository_selection: context.selectedRepos ? "selected" : "all",
    permissions: context.permissions,
    events: context.events,
  };
}

function openPullFor(repo: Repo, head: string, base: string): PullRequest | undefined {
  return [...repo.issues.values()]
    .filter(isPull)
    .find((pull) => pull.state === "open" && pull.pull.head === head && pull.pull.base === base);
}

function numberParam(value: string | undefined): number {
  return /^\d+$/.test(value ?? "") ? Number(value) : Number.NaN;
}

function splitHead(head: string): [string, string] {
  const colon = head.indexOf(":");
  return [head.slice(0, colon), head.slice(colon + 1)];
}

const sameLogin = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** `ghs_` and 36 letters and digits, the shape of GitHub's classic installation tokens. */
export function newToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return `ghs_${[...randomBytes(36)].map((byte) => alphabet[byte % alphabet.length]).join("")}`;
}

function decodeJwtPayload(jwt: string): { iss?: unknown } | undefined {
  try {
    return JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

/** Label names from `{labels: [...]}` or a bare array, of names or `{name}` objects, as GitHub accepts them. */
function labelNames(body: unknown): string[] {
  const input = Array.isArray(body) ? body : (body as { labels?: unknown } | undefined)?.labels;
  if (!Array.isArray(input)) throw validationFailed("Label", { field: "labels", code: "invalid" });
  const names = input.map((item: unknown) => (typeof item === "string" ? item : (item as { name?: unknown } | null)?.name));
  if (!names.every((name): name is string => typeof name === "string" && name.trim() !== "")) {
    throw validationFailed("Label", { field: "name", code: "invalid" });
  }
  return names;
}
