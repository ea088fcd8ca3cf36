import { createHash } from "node:crypto";
import nock from "nock";
import { branchSha, commitExists } from "../../emulator/git-repos.ts";

export const API = "https://api.github.com";

export type Route =
  | "token"
  | "config"
  | "permission"
  | "reactions"
  /** Lisa's reaction to a `/lisa` command in a comment. */
  | "comment-reactions"
  | "comments"
  | "comment-update"
  /** An issue's labels: reading them, adding some, replacing them all, taking one off. */
  | "label-read"
  | "label-add"
  | "label-set"
  | "label-delete"
  | "pulls"
  /** Reading a pull request (Lisa opens it with the body it keeps: no edit follows). */
  | "pull-read"
  | "reviews"
  /** Asking for reviews at the gate. */
  | "reviewers"
  /** The "Lisa" check run on a head: listing a commit's and creating one… */
  | "checks"
  /** …and completing one created in progress (plans of several steps). */
  | "check-update";

export interface FakeComment {
  id: number;
  body: string;
  user: { login: string; type: string };
}

export interface FakePull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  html_url: string;
  draft: boolean;
  /** The last head commit a request saw (the branch's commit is read from the repository). */
  headSha?: string;
}

export interface FakeGitHubOptions {
  owner: string;
  repo: string;
  installationId: number;
  token: string;
  /**
   * The bare repository standing in for this one (Lisa pushes to it): a pull request's `head.sha` is
   * its branch's commit there, and a check run's `head_sha` must be one of its commits.
   */
  gitDir: string;
  /** Text of `.github/lisa.yml`; null when the file does not exist. */
  config: string | null;
  /** Role of every user asking, as `role_name`. */
  role?: string;
  /** The routes this test expects Lisa to use; any other request fails the test. */
  routes: Route[];
  comments?: FakeComment[];
  pulls?: FakePull[];
  /** Labels already on the issue, e.g. the state label an earlier process set. */
  labels?: string[];
}

/**
 * GitHub's REST API for one repository, faked at the HTTP layer with nock and backed by state the
 * test can read. Only the listed routes answer; every other request is unmatched and fails.
 */
type Reply = [number, unknown?, Record<string, string>?];

/**
 * Adapts a handler of (path, parsed JSON body) to nock 15's reply function, which receives the
 * fetch Request and a callback.
 */
function respond(handler: (uri: string, body: unknown) => Reply | Promise<Reply>) {
  return (request: unknown, callback: unknown) => {
    const req = request as Request;
    const done = callback as (error: Error | null, reply?: Reply) => void;
    const url = new URL(req.url);
    req
      .text()
      .then(async (text) => done(null, await handler(`${url.pathname}${url.search}`, text ? JSON.parse(text) : undefined)))
      .catch((error: Error) => done(error));
  };
}

/**
 * A pull request as the REST API shows it. Its head is the branch's commit in `gitDir`, read at each
 * request since a push moves it; a branch deleted since keeps the last head seen, as GitHub does.
 */
async function pullJson(gitDir: string, pull: FakePull) {
  const sha = (await branchSha(gitDir, pull.head)) ?? pull.headSha;
  if (sha === undefined) throw new Error(`fake GitHub: pull #${pull.number}'s branch ${pull.head} is not in ${gitDir}`);
  pull.headSha = sha;
  const { headSha: _, ...fields } = pull;
  return {
    ...fields,
    state: "open",
    merged: false,
    node_id: `PR_${pull.number}`,
    head: { ref: pull.head, sha },
    base: { ref: pull.base },
  };
}

export function fakeGitHub(options: FakeGitHubOptions) {
  const { owner, repo, gitDir } = options;
  const base = `/repos/${owner}/${repo}`;
  const state = {
    comments: [...(options.comments ?? [])],
    labels: new Set<string>(options.labels),
    reactions: [] as string[],
    pulls: [...(options.pulls ?? [])],
    checkRuns: [] as { id: number; name: string; head_sha: string; status: string; conclusion: string | null }[],
    requests: [] as string[],
    /** Each read of the repository's `.github/lisa.yml`: the ETag it was sent with, and GitHub's answer. */
    configReads: [] as { ifNoneMatch: string | undefined; status: number }[],
  };
  let nextId = 1000;
  const bot = { login: "lisa[bot]", type: "Bot" };
  const scope = nock(API);
  const record = (method: string, uri: string) => state.requests.push(`${method} ${decodeURIComponent(uri)}`);

  const routes = new Set(options.routes);

  if (routes.has("token")) {
    scope
      .post(`/app/installations/${options.installationId}/access_tokens`)
      .reply(201, () => ({
        token: options.token,
        expires_at: "2099-01-01T00:00:00Z",
        permissions: {},
      }))
      .persist();
  }
  if (routes.has("config")) {
    const configPath = (r: string) => new RegExp(`^/repos/${owner}/${r}/contents/\\.github(%2F|/)lisa\\.yml`);
    scope
      .get(configPath(repo))
      .reply((request: unknown, callback: unknown) => {
        const req = request as Request;
        const url = new URL(req.url);
        record("GET", `${url.pathname}${url.search}`);
        const ifNoneMatch = req.headers.get("if-none-match") ?? undefined;
        const etag = options.config === null ? "" : `W/"${createHash("sha1").update(options.config).digest("hex")}"`;
        const reply: Reply =
          options.config === null
            ? [404, { message: "Not Found" }]
            : ifNoneMatch === etag
              ? [304, "", { etag }]
              : [200, options.config, { "content-type": "application/vnd.github.raw; charset=utf-8", etag }];
        state.configReads.push({ ifNoneMatch, status: reply[0] });
        (callback as (error: Error | null, reply?: Reply) => void)(null, reply);
      })
      .persist();
    if (options.config === null) {
      // Probot's loader falls back to the owner's `.github` repository.
      scope
        .get(configPath(".github"))
        .reply(
          respond((uri) => {
            record("GET", uri);
            return [404, { message: "Not Found" }];
          }),
        )
        .persist();
    }
  }
  if (routes.has("permission")) {
    scope
      .get(new RegExp(`^${base}/collaborators/[^/]+/permission$`))
      .reply(
        respond((uri) => {
          record("GET", uri);
          const role = options.role ?? "write";
          const legacy = role === "maintain" ? "write" : role === "triage" ? "read" : role;
          return [
            200,
            {
              permission: legacy,
              role_name: role,
              user: { login: uri.split("/").at(-2) },
            },
          ];
        }),
      )
      .persist();
  }
  if (routes.has("comment-reactions")) {
    scope
      .post(new RegExp(`^${base}/issues/comments/\\d+/reactions$`))
      .reply(
        respond((uri, body) => {
          record("POST", uri);
          return [201, { id: 2, content: (body as { content: string }).content }];
        }),
      )
      .persist();
  }
  if (routes.has("reactions")) {
    scope
      .post(new RegExp(`^${base}/issues/\\d+/reactions$`))
      .reply(
        respond((uri, body) => {
          record("POST", uri);
          state.reactions.push((body as { content: string }).content);
          return [201, { id: 1, content: (body as { content: string }).content }];
        }),
      )
      .persist();
  }
  if (routes.has("comments")) {
    scope
      .get(new RegExp(`^${base}/issues/\\d+/comments`))
      .reply(
        respond((uri) => {
          record("GET", uri);
          return [200, state.comments];
        }),
      )
      .persist();
    scope
      .post(new RegExp(`^${base}/issues/\\d+/comments$`))
      .reply(
        respond((uri, body) => {
          record("POST", uri);
          const comment = {
            id: nextId++,
            body: (body as { body: string }).body,
            user: bot,
          };
          state.comments.push(comment);
          return [201, comment];
        }),
      )
      .persist();
  }
  if (routes.has("comment-update")) {
    scope
      .patch(new RegExp(`^${base}/issues/comments/\\d+$`))
      .reply(
        respond((uri, body) => {
          record("PATCH", uri);
          const comment = state.comments.find((c) => c.id === Number(uri.split("/").at(-1)));
          if (!comment) return [404, { message: "Not Found" }];
          comment.body = (body as { body: string }).body;
          return [200, comment];
        }),
      )
      .persist();
  }
  if (routes.has("label-read")) {
    scope
      .get(new RegExp(`^${base}/issues/\\d+/labels(\\?.*)?$`))
      .reply(respond(() => [200, [...state.labels].map((name) => ({ name }))]))
      .persist();
  }
  if (routes.has("label-add")) {
    scope
      .post(new RegExp(`^${base}/issues/\\d+/labels$`))
      .reply(
        respond((uri, body) => {
          record("POST", uri);
          for (const label of (body as { labels: string[] }).labels) state.labels.add(label);
          return [200, [...state.labels].map((name) => ({ name }))];
        }),
      )
      .persist();
  }
  if (routes.has("label-set")) {
    scope
      .put(new RegExp(`^${base}/issues/\\d+/labels$`))
      .reply(
        respond((uri, body) => {
          record("PUT", uri);
          state.labels.clear();
          for (const label of (body as { labels: string[] }).labels) state.labels.add(label);
          return [200, [...state.labels].map((name) => ({ name }))];
        }),
      )
      .persist();
  }
  if (routes.has("label-delete")) {
    scope
      .delete(new RegExp(`^${base}/issues/\\d+/labels/.+$`))
      .reply(
        respond((uri) => {
          const name = decodeURIComponent(uri.split("/").at(-1) ?? "");
          if (!state.labels.delete(name)) return [404, { message: "Label does not exist" }];
          record("DELETE", uri);
          return [200, [...state.labels].map((n) => ({ name: n }))];
        }),
      )
      .persist();
  }
  if (routes.has("pulls")) {
    scope
      .get(new RegExp(`^${base}/pulls\\?`))
      .reply(
        respond(async (uri) => {
          record("GET", uri);
          const head = new URL(uri, API).searchParams.get("head")?.split(":")[1];
          const pulls = state.pulls.filter((p) => p.head === head);
          return [200, await Promise.all(pulls.map((p) => pullJson(gitDir, p)))];
        }),
      )
      .persist();
    scope
      .post(`${base}/pulls`)
      .reply(
        respond(async (uri, body) => {
          record("POST", uri);
          const input = body as {
            title: string;
            body: string;
            head: string;
            base: string;
            draft?: boolean;
          };
          // GitHub refuses a pull request from a branch it does not have.
          if ((await branchSha(gitDir, input.head)) === undefined)
            return [422, { message: "Validation Failed", errors: [{ resource: "PullRequest", field: "head", code: "invalid" }] }];
          const number = state.pulls.length + 10;
          const pull = {
            ...input,
            draft: input.draft ?? false,
            number,
            html_url: `https://github.com/${owner}/${repo}/pull/${number}`,
          };
          state.pulls.push(pull);
          return [201, await pullJson(gitDir, pull)];
        }),
      )
      .persist();
  }
  if (routes.has("pull-read")) {
    scope
      .get(new RegExp(`^${base}/pulls/\\d+$`))
      .reply(
        respond(async (uri) => {
          record("GET", uri);
          const pull = state.pulls.find((p) => p.number === Number(uri.split("/").at(-1)));
          return pull ? [200, await pullJson(gitDir, pull)] : [404, { message: "Not Found" }];
        }),
      )
      .persist();
  }
  if (routes.has("reviews")) {
    scope
      .get(new RegExp(`^${base}/pulls/\\d+/reviews`))
      .reply(
        respond((uri) => {
          record("GET", uri);
          return [200, []];
        }),
      )
      .persist();
  }
  if (routes.has("reviewers")) {
    scope
      .post(new RegExp(`^${base}/pulls/\\d+/requested_reviewers$`))
      .reply(
        respond((uri, body) => {
          record("POST", uri);
          const number = Number(uri.split("/").at(-2));
          const reviewers = (body as { reviewers?: string[] }).reviewers ?? [];
          return [201, { number, requested_reviewers: reviewers.map((login) => ({ login })) }];
        }),
      )
      .persist();
  }
  if (routes.has("checks")) {
    scope
      .get(new RegExp(`^${base}/commits/[^/]+/check-runs`))
      .reply(
        respond((uri) => {
          record("GET", uri);
          const url = new URL(uri, API);
          const sha = url.pathname.split("/").at(-2);
          const name = url.searchParams.get("check_name");
          const runs = state.checkRuns.filter((run) => run.head_sha === sha && (name === null || run.name === name)).reverse();
          return [200, { total_count: runs.length, check_runs: runs }];
        }),
      )
      .persist();
    scope
      .post(`${base}/check-runs`)
      .reply(
        respond(async (uri, body) => {
          record("POST", uri);
          const fields = body as { name: string; head_sha: string; status?: string; conclusion?: string };
          // As GitHub: a check run is on a commit of the repository, never on a branch name or a made-up SHA.
          if (!(await commitExists(gitDir, fields.head_sha)))
            return [422, { message: `No commit found for SHA: ${fields.head_sha}` }];
          const run = {
            id: nextId++,
            name: fields.name,
            head_sha: fields.head_sha,
            status: fields.conclusion ? "completed" : (fields.status ?? "queued"),
            conclusion: fields.conclusion ?? null,
          };
          state.checkRuns.push(run);
          return [201, run];
        }),
      )
      .persist();
  }
  if (routes.has("check-update")) {
    scope
      .patch(new RegExp(`^${base}/check-runs/\\d+$`))
      .reply(
        respond((uri, body) => {
          record("PATCH", uri);
          const run = state.checkRuns.find((r) => r.id === Number(uri.split("/").at(-1)));
          if (!run) return [404, { message: "Not Found" }];
          const fields = body as { status?: string; conclusion?: string };
          if (fields.conclusion) Object.assign(run, { status: "completed", conclusion: fields.conclusion });
          else if (fields.status) run.status = fields.status;
          return [200, run];
        }),
      )
      .persist();
  }
  /** The body of Lisa's tracking comment on the issue, or "" before there is one. */
  const trackingComment = () => state.comments.find((c) => c.body.includes("lisa:tracking"))?.body ?? "";
  /** A commit to `.github/lisa.yml` on the default branch (the owner's `.github` fallback stays as it was made). */
  const setConfig = (text: string) => {
    options.config = text;
  };
  return { state, scope, trackingComment, setConfig };
}
