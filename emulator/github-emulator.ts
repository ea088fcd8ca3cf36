import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { CONFIG_PATH } from "../src/config/parse-config.ts";
import { grantedPermissions, subscribedEvents } from "./app-events.ts";
import { rerequestCheckRun } from "./check-rerequest.ts";
import { checkRunJson } from "./check-runs.ts";
import { ciBaseline, createStatus, rerunCheck, runCi } from "./ci-runs.ts";
import { type EmulatorContext, emit, emitComment, emitLabelChange, emitPullChange, pullView } from "./context.ts";
import { isGitPath, serveGit } from "./git-http.ts";
import { commitOnBranch, createBareRepository, diffHunk, mergeBranches, readPath } from "./git-repos.ts";
import { closeIssue, closeIssuesOnMerge } from "./issue-closing.ts";
import { createLogHost } from "./log-host.ts";
import { commentJson, issueJson, pullJson, reviewCommentJson, reviewJson } from "./representations.ts";
import { type RecordedRequest, recordForValidation } from "./request-record.ts";
import { markMerged, newToken, restRoutes } from "./rest-routes.ts";
import {
  errorResponse,
  HttpError,
  matchRoute,
  notFound,
  parseJsonBody,
  type RouteResponse,
  readJsonBody,
  responseFor,
  send,
  validationFailed,
} from "./router.ts";
import {
  type Account,
  type AccountType,
  type CheckRun,
  type CiCheck,
  type CommitStatus,
  EmulatorState,
  type Issue,
  isPull,
  now,
  type PullRequest,
  type Repo,
  type ReviewComment,
  type ReviewState,
  type Role,
} from "./state.ts";
import { createWebhookSender, type Delivery } from "./webhooks.ts";

export type { CommentJson, IssueJson, PullJson, ReviewJson } from "./representations.ts";
export type { CiCheck, ReviewState, Role } from "./state.ts";
export type { Delivery } from "./webhooks.ts";

export interface GitHubEmulatorOptions {
  /** Folder of the bare repositories, `<reposRoot>/<owner>/<name>.git`, served over HTTP at `gitBaseUrl`. */
  reposRoot: string;
  /** Where webhooks go; may be set later with `setWebhookUrl`. Without one, deliveries are only logged. */
  webhookUrl?: string;
  webhookSecret: string;
  /** The one installation, which covers every repository. Default 1. */
  installationId?: number;
  /** Whether changes made through the API send webhooks too, as GitHub does (sender: the bot). Default true. */
  apiWebhooks?: boolean;
  /**
   * How long an installation token is good for git; an hour by default, as on GitHub. Shorter, it
   * proves each fetch and push uses a token minted just before it. The REST API goes on accepting
   * a token after that: Probot keeps tokens for 59 minutes, which GitHub's hour outlives, and a
   * test cannot shorten that cache to match.
   */
  tokenLifetimeMs?: number;
  /**
   * What tokens and signed log URLs expire by (ms since the epoch); Date.now by default. A test
   * moves it past a token's hour instead of waiting.
   */
  tokenClock?: () => number;
  /**
   * Lay the API out as GitHub Enterprise Server does, where Probot looks for it when `GHE_HOST` is
   * set: REST under `/api/v3`, GraphQL at `/api/graphql`, git at the root. Requests without the
   * prefix are answered 404, as a GHES host answers them.
   */
  ghes?: boolean;
  /**
   * The events the App subscribes to (`default_events` of app.yml; see subscribedEvents): GitHub
   * sends no other, and an App that handles one it did not subscribe to never hears of it. Those of
   * Lisa's app.yml by default.
   */
  events?: readonly string[];
  /**
   * The permissions the installation holds (`default_permissions` of app.yml by default): an
   * installation whose owner has not accepted a new permission yet is one without it.
   */
  permissions?: Readonly<Record<string, "read" | "write">>;
  /**
   * What the App's registration asks for, as GET /app reports it: the installation's permissions
   * and events by default; more when its owner has yet to accept what the App asks for now.
   */
  registered?: { permissions?: Readonly<Record<string, "read" | "write">>; events?: readonly string[] };
  /**
   * Other Apps installed with `checks: write`, each given an empty queued check suite on every
   * pushed head as GitHub gives them (Lisa's own App gets one too). Dependabot's by default.
   */
  checksApps?: readonly { id: number; slug: string }[];
  /** The repositories (owner/name) the installation's owner selected; all of theirs when omitted. */
  selectedRepos?: readonly string[];
  /** Answers a request before the emulator does (the standalone emulator's own controls); true when it did. */
  intercept?: (request: IncomingMessage, response: ServerResponse) => boolean;
}

// Tests take the request type from the emulator itself; it lives beside the record that writes it.
export type { RecordedRequest };

/** Told of an API request and both bodies (parsed JSON, or undefined) once its route has acted. */
export type AnswerListener = (request: RecordedRequest, bodies: { request: unknown; response: unknown }) => void;

/** A fault the emulator answers with instead of a route (injectFault). */
export interface Fault {
  method?: string;
  path: RegExp;
  /**
   * `slow`: the request is answered as usual, `delayMs` late (a GitHub under load). `hang`: never
   * acted on nor answered (a client killed as its request left: GitHub never got it). `lost_answer`:
   * acted on, then answered 502 (GitHub did it, and the client cannot know).
   */
  kind: "server_error" | "rate_limited" | "secondary_rate_limit" | "slow" | "hang" | "lost_answer";
  /** Only requests whose JSON body's text matches. */
  body?: RegExp;
  /** Told when the fault answers a request (for `hang`, when the request arrives). */
  onHit?: () => void;
  /** How many requests it answers; 1 by default. */
  times?: number;
  delayMs?: number;
}

/** Dependabot's App on github.com: installed with `checks: write` almost everywhere, it reports no check on most pushes. */
export const DEPENDABOT = { id: 29110, slug: "dependabot" } as const;

/** GitHub's longest issue, comment, review and pull request body, in characters. */
export const GITHUB_MAX_BODY = 65_536;

/** The error GitHub answers with for each kind of fault, headers included. */
function faultError(kind: Exclude<Fault["kind"], "slow" | "hang" | "lost_answer">): HttpError {
  if (kind === "server_error") return new HttpError(502, "Server Error");
  if (kind === "rate_limited") return new HttpError(429, "API rate limit exceeded", undefined, { "retry-after": "1" });
  return new HttpError(
    403,
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    undefined,
    {
      "retry-after": "1",
    },
  );
}

export interface CreateRepoOptions {
  defaultBranch?: string;
  files?: Record<string, string>;
  description?: string;
  /** Text of `.github/lisa.yml`, committed with the other files. */
  config?: string;
  /** Private repositories answer 404 for non-collaborators' permission; public ones `read`. Default false. */
  private?: boolean;
  /** The owner of a `User` repository is its admin; an `Organization` has no implicit admin. Default `User`. */
  ownerType?: Extract<AccountType, "User" | "Organization">;
  /** False: `POST /pulls` with `draft: true` answers 422, as on a plan without drafts. Default true. */
  draftPullRequests?: boolean;
  /** A branch rule requiring this many approvals: GraphQL's `reviewDecision` follows it. Default: no rule. */
  requiredApprovals?: number;
  /** The repository's CI: checks the emulator runs on every push (none by default). */
  ci?: CiCheck[];
  /** Checks branch protection requires on the default branch. Default: no rule. */
  requiredChecks?: string[];
  /** Checks a ruleset requires on the default branch (a `required_status_checks` rule). Default: no rule. */
  rulesetChecks?: string[];
  /** The merge methods the repository allows; `PUT .../merge` with another answers 405. Default: all three. */
  mergeMethods?: ("merge" | "squash" | "rebase")[];
}

/**
 * A small, stateful stand-in for github.com: a local HTTP server answering the REST calls Lisa makes,
 * backed by real bare git repositories, and helpers that act like people on GitHub (open an issue,
 * label it, comment, review) and send the signed webhooks github.com would send for that.
 *
 * ```ts
 * const github = createGitHubEmulator({ reposRoot, webhookSecret, webhookUrl: `${lisaUrl}/api/github/webhooks` });
 * await github.start(); // then: new Probot({ baseUrl: github.url, ... }), createLisa(probot, { gitBaseUrl: github.gitBaseUrl, ... })
 * await github.createRepo("acme/site", { files: { "README.md": "# Hi\n" }, config: "label: lisa\n" });
 * github.addCollaborator("acme/site", "mona", "write");
 * const issue = await github.createIssue("acme/site", { title: "Fix the typo", user: "mona" });
 * await github.labelIssue("acme/site", issue.number, "lisa", "mona");
 * ```
 *
 * Start it before calling the helpers: payloads carry URLs on the emulator's address.
 */
export function createGitHubEmulator(options: GitHubEmulatorOptions) {
  const state = new EmulatorState();
  let baseUrl: string | undefined;
  let webhookUrl = options.webhookUrl;
  const reposRoot = path.resolve(options.reposRoot);

  const events = options.events ?? subscribedEvents();
  const context: EmulatorContext = {
    state,
    links: () => ({ base: requireUrl(), git: requireUrl() }),
    installationId: options.installationId ?? 1,
    bot: state.account("lisa[bot]", "Bot"),
    appId: 1,
    tokens: new Map(),
    tokenUsers: new Map(),
    tokenLifetimeMs: options.tokenLifetimeMs ?? 60 * 60 * 1000,
    tokenClock: options.tokenClock ?? Date.now,
    headLagMs: 0,
    webhooks: createWebhookSender({
      secret: options.webhookSecret,
      url: () => webhookUrl,
      appId: () => context.appId,
      events,
    }),
    apiWebhooks: options.apiWebhooks ?? true,
    logHost: createLogHost(state, options.tokenClock ?? Date.now),
    permissions: options.permissions ?? grantedPermissions(),
    checksApps: options.checksApps ?? [DEPENDABOT],
    events,
    selectedRepos: options.selectedRepos,
    registered: {
      permissions: options.registered?.permissions ?? options.permissions ?? grantedPermissions(),
      events: options.registered?.events ?? events,
    },
  };
  const routes = restRoutes(context);
  const requestLog: RecordedRequest[] = [];
  const server = createServer((request, response) => void handle(request, response));

  function requireUrl(): string {
    if (!baseUrl) throw new Error("the GitHub emulator has not been started");
    return baseUrl;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const arrivedAt = performance.now();
    const url = new URL(request.url ?? "/", "http://emulator");
    if (options.intercept?.(request, response)) return;
    if (isGitPath(url.pathname)) {
      serveGit(request, response, {
        reposRoot,
        tokenValid: (token) => (context.tokens.get(token) ?? 0) > context.tokenClock(),
        // A person's token pushes as that person; an installation's needs `workflows: write`.
        refusesWorkflows: (token) => !context.tokenUsers.has(token) && context.permissions.workflows !== "write",
        pushed: async (pathname) => {
          pushTimes.push(performance.now());
          const [, owner = "", name = ""] = /^\/([\w.-]+)\/([\w.-]+)\.git\//.exec(pathname) ?? [];
          const repo = state.findRepo(owner, name);
          if (repo) await runCi(context, repo);
        },
      });
      return;
    }
    const answer = await answerApi(request.method ?? "GET", url, request.headers, () => readJsonBody(request), arrivedAt);
    if (answer) send(response, answer);
  }

  /**
   * The API's answer to one request, recorded and told to `beforeAnswer` listeners, whether it
   * came over HTTP (handle) or in this process (fetch); undefined for a fault that holds it unanswered.
   */
  async function answerApi(
    method: string,
    url: URL,
    headers: IncomingHttpHeaders,
    readBody: () => Promise<unknown>,
    arrivedAt: number,
  ): Promise<RouteResponse | undefined> {
    const apiPath = options.ghes ? ghesRoute(url.pathname) : url.pathname;
    const match = apiPath === undefined ? undefined : matchRoute(routes, method, apiPath);
    let answer: RouteResponse;
    let body: unknown;
    try {
      body = await readBody();
      const fault = takeFault(method, safeDecode(url.pathname), body);
      if (fault instanceof HttpError) throw fault;
      // Held until the client goes away; the emulator's stop ends the connection.
      if (typeof fault === "object" && fault.delayMs === Number.POSITIVE_INFINITY) return undefined;
      if (typeof fault === "object") await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      if (!match) throw notFound();
      // GitHub refuses a body over its limit rather than cutting it; Lisa must cut first.
      const text = (body as { body?: unknown } | undefined)?.body;
      if (typeof text === "string" && text.length > GITHUB_MAX_BODY) {
        throw validationFailed(match.route.pattern.includes("/pulls") ? "PullRequest" : "IssueComment", {
          field: "body",
          code: "custom",
          message: `body is too long (maximum is ${GITHUB_MAX_BODY} characters)`,
        });
      }
      answer = await match.route.handler({
        method,
        path: apiPath ?? url.pathname,
        params: match.params,
        query: url.searchParams,
        headers,
        body,
      });
      if (fault === "lost_answer") throw new HttpError(502, "Server Error");
    } catch (error) {
      answer = error instanceof HttpError ? errorResponse(error) : { status: 500, body: { message: (error as Error).message } };
    }
    const ifNoneMatch = headers["if-none-match"];
    const recorded: RecordedRequest = {
      method,
      path: safeDecode(url.pathname + url.search),
      status: answer.status,
      route: match?.route.pattern ?? null,
      arrivedAt,
      ...(ifNoneMatch === undefined ? {} : { ifNoneMatch: String(ifNoneMatch) }),
    };
    requestLog.push(recorded);
    recordForValidation(recorded, headers["user-agent"], body);
    for (const listener of answerListeners) listener(recorded, { request: body, response: answer.body });
    return answer;
  }

  /** The route a GHES path names (`/api/v3/repos/…` → `/repos/…`), or undefined outside the API. */
  function ghesRoute(pathname: string): string | undefined {
    if (pathname === "/api/graphql") return "/graphql";
    return pathname.startsWith("/api/v3/") ? pathname.slice("/api/v3".length) : undefined;
  }

  /** Told of each API request after its route has acted, before the answer leaves (beforeAnswer). */
  const answerListeners = new Set<AnswerListener>();
  /** When each push over git's HTTP arrived, as `performance.now()` (pushTimes). */
  const pushTimes: number[] = [];

  /** Faults to answer instead of the route, oldest first; each answers `times` requests. */
  const faults: (Fault & { left: number })[] = [];

  /** The fault for this request, if one is left: an error to answer, a delay before answering, or never. */
  function takeFault(method: string, path: string, body: unknown): HttpError | { delayMs: number } | "lost_answer" | undefined {
    const fault = faults.find(
      (f) =>
        f.left > 0 &&
        (f.method ?? method) === method &&
        f.path.test(path) &&
        (!f.body || f.body.test(JSON.stringify(body ?? null))),
    );
    if (!fault) return undefined;
    fault.left -= 1;
    fault.onHit?.();
    if (fault.kind === "hang") return { delayMs: Number.POSITIVE_INFINITY };
    if (fault.kind === "lost_answer") return fault.kind;
    return fault.kind === "slow" ? { delayMs: fault.delayMs ?? 1_000 } : faultError(fault.kind);
  }

  function repoNamed(fullName: string): Repo {
    const [owner = "", name = ""] = fullName.split("/");
    const repo = state.findRepo(owner, name);
    if (!repo) throw new Error(`no repository ${fullName} in the emulator; createRepo() it first`);
    return repo;
  }

  function issueIn(repo: Repo, number: number): Issue {
    const issue = repo.issues.get(number);
    if (!issue) throw new Error(`no issue or pull request #${number} in ${repo.fullName}`);
    return issue;
  }

  async function addReviewComment(
    repo: Repo,
    pull: PullRequest,
    inline: { path: string; line: number; body: string; user: Account; reviewId: number; commitId: string; inReplyTo?: number },
  ): Promise<ReviewComment> {
    const created = now();
    const comment: ReviewComment = {
      id: state.nextId(),
      reviewId: inline.reviewId,
      pullNumber: pull.number,
      path: inline.path,
      line: inline.line,
      body: inline.body,
      user: inline.user,
      commitId: inline.commitId,
      diffHunk: await diffHunk(repo.gitDir, pull.pull.base, inline.commitId, inline.path, inline.line),
      inReplyTo: inline.inReplyTo ?? null,
      reactions: [],
      createdAt: created,
      updatedAt: created,
    };
    repo.reviewComments.set(comment.id, comment);
    return comment;
  }

  function pullIn(repo: Repo, number: number): PullRequest {
    const issue = issueIn(repo, number);
    if (!isPull(issue)) throw new Error(`#${number} in ${repo.fullName} is an issue, not a pull request`);
    return issue;
  }

  return {
    /** `http://127.0.0.1:<port>`: Octokit's and Probot's `baseUrl`, and the host's address in GHES mode. */
    get url(): string {
      return requireUrl();
    },
    /** Where the REST API is: `url`, or `<url>/api/v3` in GHES mode. */
    get apiUrl(): string {
      return options.ghes ? `${requireUrl()}/api/v3` : requireUrl();
    },
    /** Where git reaches the repositories over HTTP (`<gitBaseUrl>/<owner>/<name>.git`): Lisa's `gitBaseUrl`. */
    get gitBaseUrl(): string {
      return requireUrl();
    },
    /** The REST routes the emulator answers, as `GET /repos/:owner/:repo`. */
    routes: (): { method: string; pattern: string }[] => routes.map(({ method, pattern }) => ({ method, pattern })),
    /** The bare repository of `fullName` on disk, for a test to look into. */
    gitDir(fullName: string): string {
      return repoNamed(fullName).gitDir;
    },
    installationId: context.installationId,
    /** The App's id, as its check runs carry it: 1 until a JWT Lisa signed names hers. */
    get appId(): number {
      return context.appId;
    },

    /** Listens on 127.0.0.1 (or `address`, e.g. 0.0.0.0 in a container) at `port`; any free port by default. */
    async start(port = 0, address = "127.0.0.1"): Promise<void> {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, address, () => resolve());
      });
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await context.logHost.start(address);
    },

    /**
     * The API without a socket (no git, no log host): payloads and links carry `baseUrl`, and
     * `fetch` answers requests to it, as Octokit's `request.fetch`, from the same routes and state.
     */
    startInProcess(url = "http://github.emulator.invalid"): void {
      baseUrl = url;
    },

    /** The REST API in this process, for Octokit's `request: { fetch }`: routes, state, faults and the request log as over HTTP. */
    async fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
      const arrivedAt = performance.now();
      const request = new Request(input, init);
      const text = await request.text();
      const headers: IncomingHttpHeaders = Object.fromEntries(request.headers);
      const answer = await answerApi(request.method, new URL(request.url), headers, async () => parseJsonBody(text), arrivedAt);
      // A held request is never answered, as over HTTP until the emulator stops.
      return answer ? responseFor(answer) : new Promise<Response>(() => {});
    },

    /** Waits for webhooks under way, then closes the server and its kept-alive connections. */
    async stop(): Promise<void> {
      await context.webhooks.idle();
      await context.logHost.stop();
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },

    /**
     * Answers the next `times` requests matching `method` (any when omitted) and `path` with a
     * fault, as GitHub does on a bad day: a 502, a 429, or a 403 for a secondary rate limit.
     */
    injectFault(fault: Fault): void {
      faults.push({ ...fault, left: fault.times ?? 1 });
    },

    /** GitHub's bad day is over: the faults not yet answered are dropped. */
    clearFaults(): void {
      faults.length = 0;
    },

    /**
     * Calls `listener` for each API request once its route has acted and before the answer is sent:
     * a test can kill the client there, when GitHub has made the change and the client never hears
     * of it. Returns a function that stops the calls. The bodies let a test hold both sides to
     * GitHub's published description (test/emulator/openapi-contract.test.ts).
     */
    beforeAnswer(listener: AnswerListener): () => void {
      answerListeners.add(listener);
      return () => answerListeners.delete(listener);
    },

    /** Every request for a job log the log host received (the 302's target), oldest first: did it carry a token? */
    logDownloads: () => context.logHost.downloads(),

    /** When each push over git's HTTP was taken in (`performance.now()`), oldest first: the bench times what follows a push. */
    pushTimes(): readonly number[] {
      return pushTimes;
    },

    setWebhookUrl(url: string | undefined): void {
      webhookUrl = url;
    },

    /** An installation token, as `POST /app/installations/:id/access_tokens` would hand out, for driving the API directly. */
    createInstallationToken(): string {
      const token = newToken();
      context.tokens.set(token, context.tokenClock() + context.tokenLifetimeMs);
      return token;
    },

    /**
     * A personal access token of `login` (`lisa run`'s kind): it never expires, works for the API
     * and git, and what it writes is written by that person, not by the App's bot.
     */
    createPersonalToken(login: string): string {
      const token = `ghp_${newToken().slice(4)}`;
      context.tokens.set(token, Number.POSITIVE_INFINITY);
      context.tokenUsers.set(token, state.account(login));
      return token;
    },

    /** Creates `owner/name` with a bare repository holding one commit of `files` (and the config) on the default branch. */
    async createRepo(fullName: string, repoOptions: CreateRepoOptions = {}) {
      const [owner, name, ...rest] = fullName.split("/");
      if (!owner || !name || rest.length > 0 || !/^[\w.-]+$/.test(owner) || !/^[\w.-]+$/.test(name)) {
        throw new Error(`not a repository name: ${fullName}`);
      }
      if (state.findRepo(owner, name)) throw new Error(`repository ${fullName} exists already`);
      const defaultBranch = repoOptions.defaultBranch ?? "main";
      const files = { ...repoOptions.files, ...(repoOptions.config === undefined ? {} : { [CONFIG_PATH]: repoOptions.config }) };
      const gitDir = path.join(reposRoot, owner, `${name}.git`);
      await createBareRepository(gitDir, defaultBranch, files);
      const repo: Repo = {
        id: state.nextId(),
        owner: state.account(owner, repoOptions.ownerType ?? "User"),
        name,
        fullName: `${owner}/${name}`,
        description: repoOptions.description ?? null,
        private: repoOptions.private ?? false,
        defaultBranch,
        gitDir,
        collaborators: new Map(),
        labels: new Map(),
        issues: new Map(),
        comments: new Map(),
        reviewComments: new Map(),
        checkRuns: new Map(),
        checkSuites: new Map(),
        statuses: [],
        ci: repoOptions.ci ?? [],
        ciRan: new Set(),
        requiredChecks: repoOptions.requiredChecks,
        rulesetChecks: repoOptions.rulesetChecks,
        draftPullRequests: repoOptions.draftPullRequests ?? true,
        requiredApprovals: repoOptions.requiredApprovals,
        mergeMethods: repoOptions.mergeMethods ?? ["merge", "squash", "rebase"],
        nextNumber: 1,
        createdAt: now(),
      };
      state.addRepo(repo);
      await ciBaseline(repo);
      return { fullName: repo.fullName, gitDir, cloneUrl: `${requireUrl()}/${repo.fullName}.git` };
    },

    /** Gives `login` a role on the repository. GitHub's `member` webhook is not sent: Lisa does not listen to it. */
    addCollaborator(fullName: string, login: string, role: Role): void {
      const repo = repoNamed(fullName);
      repo.collaborators.set(login.toLowerCase(), { login: state.account(login).login, role });
    },

    /** `user` opens an issue; sends `issues.opened`. */
    async createIssue(fullName: string, issue: { title: string; body?: string; user: string }) {
      const repo = repoNamed(fullName);
      const user = state.account(issue.user);
      const created = now();
      const record: Issue = {
        id: state.nextId(),
        number: repo.nextNumber++,
        title: issue.title,
        body: issue.body ?? null,
        user,
        labels: [],
        state: "open",
        reactions: [],
        createdAt: created,
        updatedAt: created,
        closedAt: null,
      };
      repo.issues.set(record.number, record);
      const json = issueJson(repo, record, context.links());
      await emit(context, "issues", repo, user, { action: "opened", issue: json });
      return json;
    },

    /** `sender` adds `label` to an issue or pull request; sends `issues.labeled` (`pull_request.labeled` for a PR). */
    async labelIssue(fullName: string, number: number, label: string, sender: string): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const issue = issueIn(repo, number);
      if (issue.labels.some((name) => name.toLowerCase() === label.toLowerCase())) {
        throw new Error(`#${number} in ${fullName} has the label ${label} already; GitHub would send no webhook`);
      }
      issue.labels.push(state.label(repo, label).name);
      issue.updatedAt = now();
      return emitLabelChange(context, repo, issue, label, "labeled", state.account(sender));
    },

    /** `user` comments on an issue or pull request; sends `issue_comment.created`. */
    async commentOnIssue(fullName: string, number: number, body: string, user: string): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const issue = issueIn(repo, number);
      const author = state.account(user);
      const comment = { id: state.nextId(), issueNumber: issue.number, body, user: author, createdAt: now(), updatedAt: now() };
      repo.comments.set(comment.id, comment);
      issue.updatedAt = now();
      return emitComment(context, repo, comment, "created", author);
    },

    /**
     * `user` submits a review, at `commitId` (default: the PR's head now), with inline comments on
     * lines of the diff. Like GitHub, each inline comment sends `pull_request_review_comment.created`,
     * then `pull_request_review.submitted` (whose `review.state` is lower-case) is sent and returned.
     */
    async submitReview(
      fullName: string,
      number: number,
      review: {
        state: ReviewState;
        body?: string;
        user: string;
        commitId?: string;
        comments?: { path: string; line: number; body: string }[];
      },
    ): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const pull = pullIn(repo, number);
      const user = state.account(review.user);
      const pullRequest = await pullView(context, repo, pull);
      const record = {
        id: state.nextId(),
        state: review.state,
        body: review.body ?? "",
        user,
        submittedAt: now(),
        commitId: review.commitId ?? pullRequest.head.sha,
      };
      pull.pull.reviews.push(record);
      for (const inline of review.comments ?? []) {
        const comment = await addReviewComment(repo, pull, { ...inline, user, reviewId: record.id, commitId: record.commitId });
        await emit(context, "pull_request_review_comment", repo, user, {
          action: "created",
          comment: reviewCommentJson(repo, comment, context.links()),
          pull_request: pullRequest,
        });
      }
      const reviewPayload = { ...reviewJson(repo, pull, record, context.links()), state: review.state.toLowerCase() };
      return emit(context, "pull_request_review", repo, user, {
        action: "submitted",
        review: reviewPayload,
        pull_request: pullRequest,
      });
    },

    /**
     * `user` writes one inline comment (or a reply in a thread), as GitHub records it: a COMMENTED
     * review holding it. Sends `pull_request_review_comment.created`, then the review; returns the first.
     */
    async commentInline(
      fullName: string,
      number: number,
      inline: { path: string; line: number; body: string; user: string; inReplyTo?: number },
    ): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const pull = pullIn(repo, number);
      const user = state.account(inline.user);
      const pullRequest = await pullView(context, repo, pull);
      const review = {
        id: state.nextId(),
        state: "COMMENTED" as const,
        body: "",
        user,
        submittedAt: now(),
        commitId: pullRequest.head.sha,
      };
      pull.pull.reviews.push(review);
      const comment = await addReviewComment(repo, pull, { ...inline, user, reviewId: review.id, commitId: review.commitId });
      const delivery = await emit(context, "pull_request_review_comment", repo, user, {
        action: "created",
        comment: reviewCommentJson(repo, comment, context.links()),
        pull_request: pullRequest,
      });
      await emit(context, "pull_request_review", repo, user, {
        action: "submitted",
        review: { ...reviewJson(repo, pull, review, context.links()), state: "commented" },
        pull_request: pullRequest,
      });
      return delivery;
    },

    /** `user` dismisses a review: it no longer counts. Sends `pull_request_review.dismissed`. */
    async dismissReview(fullName: string, number: number, reviewId: number, dismissal: { user: string; message: string }) {
      const repo = repoNamed(fullName);
      const pull = pullIn(repo, number);
      const review = pull.pull.reviews.find((r) => r.id === reviewId);
      if (!review) throw new Error(`no review ${reviewId} on ${fullName}#${number}`);
      review.state = "DISMISSED";
      return emit(context, "pull_request_review", repo, state.account(dismissal.user), {
        action: "dismissed",
        review: { ...reviewJson(repo, pull, review, context.links()), state: "dismissed" },
        pull_request: await pullView(context, repo, pull),
      });
    },

    /**
     * `user` pushes a commit to `branch` (with `force`, one that rewrites its history); sends `push`
     * and `pull_request.synchronize` for each open pull request from that branch.
     */
    async pushCommit(
      fullName: string,
      branch: string,
      push: { files: Record<string, string | null>; message: string; user: string; force?: boolean },
    ): Promise<{ sha: string; deliveries: Delivery[] }> {
      const repo = repoNamed(fullName);
      const pusher = state.account(push.user);
      const { before, after } = await commitOnBranch(repo.gitDir, {
        branch,
        base: repo.defaultBranch,
        files: push.files,
        message: push.message,
        author: pusher.login,
        force: push.force ?? false,
      });
      await runCi(context, repo);
      const deliveries = [
        await emit(context, "push", repo, pusher, { ref: `refs/heads/${branch}`, before, after, forced: push.force ?? false }),
      ];
      for (const pull of [...repo.issues.values()].filter(isPull)) {
        if (pull.state !== "open" || pull.pull.head !== branch) continue;
        deliveries.push(
          await emit(context, "pull_request", repo, pusher, {
            action: "synchronize",
            number: pull.number,
            before,
            after,
            pull_request: await pullView(context, repo, pull),
          }),
        );
      }
      return { sha: after, deliveries };
    },

    /**
     * `user` merges a pull request (a merge commit on its base); sends `pull_request.closed` with
     * `merged: true`, then closes the issues its body names with a closing keyword, as GitHub does.
     */
    async mergePull(fullName: string, number: number, merge: { user: string }): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const pull = pullIn(repo, number);
      if (pull.state !== "open") throw new Error(`${fullName}#${number} is not open`);
      const sha = await mergeBranches(repo.gitDir, pull.pull.base, pull.pull.head, `Merge pull request #${number}`);
      if (!sha) throw new Error(`${fullName}#${number} conflicts with ${pull.pull.base}`);
      markMerged(pull, sha, state.account(merge.user));
      const delivery = await emitPullChange(context, repo, pull, "closed", state.account(merge.user));
      await closeIssuesOnMerge(context, repo, pull, state.account(merge.user));
      return delivery;
    },

    /** `user` closes a pull request without merging it; sends `pull_request.closed`. */
    async closePull(fullName: string, number: number, user: string): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const pull = pullIn(repo, number);
      pull.state = "closed";
      pull.closedAt = now();
      pull.updatedAt = pull.closedAt;
      return emitPullChange(context, repo, pull, "closed", state.account(user));
    },

    /** `user` reopens a pull request closed without merging; sends `pull_request.reopened`. */
    async reopenPull(fullName: string, number: number, user: string): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const pull = pullIn(repo, number);
      if (pull.pull.merged) throw new Error(`${fullName}#${number} is merged and cannot be reopened`);
      pull.state = "open";
      pull.closedAt = null;
      pull.updatedAt = now();
      return emitPullChange(context, repo, pull, "reopened", state.account(user));
    },

    /** `sender` takes `label` off an issue; sends `issues.unlabeled`. */
    async unlabelIssue(fullName: string, number: number, label: string, sender: string): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const issue = issueIn(repo, number);
      const index = issue.labels.findIndex((name) => name.toLowerCase() === label.toLowerCase());
      if (index === -1) throw new Error(`#${number} in ${fullName} has no label ${label}; GitHub would send no webhook`);
      const [removed = label] = issue.labels.splice(index, 1);
      issue.updatedAt = now();
      return emitLabelChange(context, repo, issue, removed, "unlabeled", state.account(sender));
    },

    /** `user` closes an issue (as completed, unless said); sends `issues.closed`. */
    async closeIssue(
      fullName: string,
      number: number,
      user: string,
      reason: "completed" | "not_planned" = "completed",
    ): Promise<Delivery> {
      const repo = repoNamed(fullName);
      const issue = issueIn(repo, number);
      if (isPull(issue)) throw new Error(`#${number} in ${fullName} is a pull request; close it with closePull`);
      const delivery = await closeIssue(context, repo, number, state.account(user), reason);
      if (!delivery) throw new Error(`#${number} in ${fullName} is closed already; GitHub would send no webhook`);
      return delivery;
    },

    /** From now on a pull request shows a push to its branch only `ms` later, as GitHub's may (0: at once). */
    lagPullHeads(ms: number): void {
      context.headLagMs = ms;
    },

    /** Another App (`appId`) reports a check run on `sha`, as a CI App would. */
    async addCheckRun(fullName: string, check: { sha: string; name: string; appId: number; conclusion?: string }) {
      const repo = repoNamed(fullName);
      const run: CheckRun = {
        id: state.nextId(),
        appId: check.appId,
        name: check.name,
        headSha: check.sha,
        status: check.conclusion ? "completed" : "in_progress",
        conclusion: check.conclusion ?? null,
        detailsUrl: null,
        output: { title: check.name, summary: "" },
        startedAt: now(),
        completedAt: check.conclusion ? now() : null,
      };
      repo.checkRuns.set(run.id, run);
      return checkRunJson(context, repo, run);
    },

    /** An external CI (`ci-bot[bot]`) reports commit status `context` on `sha`, through what `POST /statuses/{sha}` does. */
    async addStatus(fullName: string, status: { sha: string; context: string; state: CommitStatus["state"] }): Promise<void> {
      const { sha, ...body } = status;
      await createStatus(context, repoNamed(fullName), sha, body, state.account("ci-bot[bot]"));
    },

    /** The repository's CI from now on (see CreateRepoOptions.ci): what it declares runs on the next push. */
    setCi(fullName: string, checks: CiCheck[]): void {
      repoNamed(fullName).ci = checks;
    },

    /** A human re-runs the CI check run `checkRunId`; it reports again as the repository's CI declares now. */
    rerunCheck(fullName: string, checkRunId: number): void {
      const repo = repoNamed(fullName);
      const name = repo.checkRuns.get(checkRunId)?.name;
      const check = repo.ci.find((c) => c.name === name);
      if (!check) throw new Error(`no CI check named ${name} in ${fullName}`);
      rerunCheck(context, repo, checkRunId, check);
    },

    /** `user` presses "Re-run" on Lisa's check run `checkRunId`: `check_run.rerequested`, sent and returned. */
    rerequestCheckRun: (fullName: string, checkRunId: number, user: string): Promise<Delivery> =>
      rerequestCheckRun(context, repoNamed(fullName), checkRunId, state.account(user)),

    /** Commit statuses reported on a repository's commits, oldest first. */
    statuses: (fullName: string) => repoNamed(fullName).statuses.map((s) => ({ ...s })),

    /** Check runs reported on a repository's commits, oldest first, as the API shows them. */
    checkRuns: (fullName: string) => {
      const repo = repoNamed(fullName);
      return [...repo.checkRuns.values()].map((run) => checkRunJson(context, repo, run));
    },

    /** Inline comments of a pull request, replies included, oldest first. */
    reviewComments: (fullName: string, number: number) => {
      const repo = repoNamed(fullName);
      return [...repo.reviewComments.values()]
        .filter((c) => c.pullNumber === number)
        .map((c) => reviewCommentJson(repo, c, context.links()));
    },
    /** Reactions on an issue comment or an inline comment. */
    commentReactions: (fullName: string, commentId: number) => {
      const repo = repoNamed(fullName);
      const reactions = repo.comments.get(commentId)?.reactions ?? repo.reviewComments.get(commentId)?.reactions ?? [];
      return reactions.map((r) => ({ content: r.content, user: r.user.login }));
    },

    /** Sends a past delivery again, same GUID and payload (a redelivery from GitHub's UI). */
    redeliver: (id: string): Promise<Delivery> => context.webhooks.redeliver(id),

    /** Every webhook sent so far, oldest first. */
    deliveries: (): Delivery[] => context.webhooks.deliveries(),
    /** Resolves when every webhook under way, those caused by API calls included, has been answered. */
    waitForWebhooks: (): Promise<void> => context.webhooks.idle(),
    /** Every request received so far, oldest first. */
    requests: (): RecordedRequest[] => [...requestLog],

    issue: (fullName: string, number: number) => {
      const repo = repoNamed(fullName);
      return issueJson(repo, issueIn(repo, number), context.links());
    },
    /** Issues and pull requests, by number. */
    issues: (fullName: string) => {
      const repo = repoNamed(fullName);
      return [...repo.issues.values()].map((issue) => issueJson(repo, issue, context.links()));
    },
    comments: (fullName: string, number: number) => {
      const repo = repoNamed(fullName);
      return [...repo.comments.values()]
        .filter((comment) => comment.issueNumber === number)
        .map((comment) => commentJson(repo, comment, context.links()));
    },
    labels: (fullName: string, number: number): string[] => [...issueIn(repoNamed(fullName), number).labels],
    reactions: (fullName: string, number: number) =>
      issueIn(repoNamed(fullName), number).reactions.map((reaction) => ({
        content: reaction.content,
        user: reaction.user.login,
      })),
    /** Pull requests by number, with the branch commits last seen by the API. */
    pulls: (fullName: string) => {
      const repo = repoNamed(fullName);
      return [...repo.issues.values()].filter(isPull).map((pull) => pullJson(repo, pull, context.links()));
    },
    reviews: (fullName: string, number: number) => {
      const repo = repoNamed(fullName);
      const pull = pullIn(repo, number);
      return pull.pull.reviews.map((review) => reviewJson(repo, pull, review, context.links()));
    },
    /** A file's text on `ref` (default branch by default), undefined when absent: what did Lisa push? */
    async readFile(fullName: string, filePath: string, ref?: string): Promise<string | undefined> {
      const repo = repoNamed(fullName);
      const found = await readPath(repo.gitDir, ref ?? repo.defaultBranch, filePath);
      return found?.type === "file" ? found.content.toString("utf8") : undefined;
    },
  };
}

export type GitHubEmulator = ReturnType<typeof createGitHubEmulator>;

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
