import { type AddressInfo, createServer } from "node:net";
import nock from "nock";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.ts";
import { createGitHubPort } from "../../src/github/create-github-port.ts";
import { GitHubError } from "../../src/github/github-error.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import { LisaOctokit } from "../../src/github/lisa-octokit.ts";
import { useStrictNock } from "../support/strict-nock.ts";

const API = "https://api.github.com";
const REF = { owner: "acme", repo: "api" };

useStrictNock();

/** The App whose installation the port acts for. */
const APP_ID = 42;

function port(mintToken: () => Promise<string> = async () => "token", baseUrl = API, self?: string): GitHubPort {
  // Octokit's own retries off: each failure reaches the port as GitHub gave it.
  const octokit = new LisaOctokit({ auth: { token: "token" }, baseUrl, retry: { enabled: false }, throttle: { enabled: false } });
  return createGitHubPort(octokit as never, mintToken, self ? { self } : { appId: async () => APP_ID });
}

/** What a port method rejected with. */
async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.fail("the call succeeded"),
    (error: unknown) => error,
  );
}

describe("the GitHub port's failures", () => {
  it("rejects with a GitHubError that says what GitHub answered", async () => {
    nock(API).patch("/repos/acme/api/issues/comments/7").reply(404, { message: "Not Found" });
    const error = await failure(port().updateComment(REF, 7, "body"));
    expect(error).toBeInstanceOf(GitHubError);
    expect(error).toMatchObject({
      status: 404,
      transient: false,
      method: "PATCH",
      url: `${API}/repos/acme/api/issues/comments/7`,
    });
    expect((error as Error).message).toMatch(/^Not Found/);
  });

  it("calls a secondary rate limit transient, with the status GitHub gave", async () => {
    nock(API)
      .post("/repos/acme/api/issues/1/comments")
      .reply(403, { message: "You have exceeded a secondary rate limit." }, { "retry-after": "60" });
    const error = await failure(port().createComment(REF, 1, "body"));
    expect(error).toBeInstanceOf(GitHubError);
    expect(error).toMatchObject({ status: 403, transient: true, method: "POST" });
  });

  it("gives a request GitHub never answered status 0, transient", async () => {
    // A port nothing listens on: the connection is refused.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port: closed } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    nock.enableNetConnect("127.0.0.1");
    const error = await failure(port(undefined, `http://127.0.0.1:${closed}`).defaultBranch(REF));
    expect(error).toBeInstanceOf(GitHubError);
    expect(error).toMatchObject({ status: 0, transient: true, method: "GET", message: expect.stringMatching(/ECONNREFUSED/) });
  });

  it("converts what the listing of a paginated read and a GraphQL request met", async () => {
    nock(API).get("/repos/acme/api/pulls/3/reviews").query(true).reply(502, { message: "Server Error" });
    nock(API).post("/graphql").reply(503, { message: "Unavailable" });
    await expect(failure(port().listReviews(REF, 3))).resolves.toMatchObject({ status: 502, transient: true });
    const graphql = await failure(port().reviewDecision(REF, 3));
    expect(graphql).toBeInstanceOf(GitHubError);
    expect(graphql).toMatchObject({ status: 503, transient: true });
  });

  it("converts a failure of the token's own client, which is not the port's Octokit", async () => {
    const minter = new LisaOctokit({ auth: { token: "app" }, retry: { enabled: false }, throttle: { enabled: false } });
    nock(API).post("/app/installations/2/access_tokens").reply(500, { message: "Server Error" });
    const error = await failure(
      port(
        async () => (await minter.rest.apps.createInstallationAccessToken({ installation_id: 2 })).data.token,
      ).installationToken(),
    );
    expect(error).toBeInstanceOf(GitHubError);
    expect(error).toMatchObject({ status: 500, transient: true });
  });

  it("lets an error that is no HTTP failure through as it was", async () => {
    const broken = new Error("the key file is unreadable");
    await expect(failure(port(() => Promise.reject(broken)).installationToken())).resolves.toBe(broken);
  });

  it("still answers what the port makes of a 404, a refused draft and a refused merge", async () => {
    nock(API).get("/repos/acme/api/collaborators/ann/permission").reply(404, { message: "Not Found" });
    nock(API).delete("/repos/acme/api/issues/1/labels/lisa").reply(404, { message: "Label does not exist" });
    nock(API)
      .post("/repos/acme/api/pulls", (body: { draft?: boolean }) => body.draft === true)
      .reply(422, {
        message: "Validation Failed",
        errors: [{ message: "Draft pull requests are not supported in this repository." }],
      })
      .post("/repos/acme/api/pulls", (body: { draft?: boolean }) => body.draft === false)
      .reply(201, { number: 4, html_url: "https://github.com/acme/api/pull/4", draft: false });
    nock(API)
      .put("/repos/acme/api/pulls/4/merge", { sha: "abc", merge_method: "merge" })
      .reply(405, { message: "Pull Request is not mergeable" });
    nock(API)
      .get("/repos/acme/api/pulls")
      .query({ head: "acme:lisa/1", base: "main", state: "all", per_page: 100 })
      .reply(200, []);
    const gh = port();
    expect(await gh.roleOf(REF, "ann")).toBe("none");
    await gh.removeLabel(REF, 1, "lisa");
    expect(await gh.ensurePullRequest(REF, { title: "t", body: "b", head: "lisa/1", base: "main", draft: true })).toEqual({
      number: 4,
      url: "https://github.com/acme/api/pull/4",
      draft: false,
      state: "open",
      merged: false,
      created: true,
    });
    expect(await gh.mergePullRequest(REF, 4, "abc", "merge")).toMatchObject({
      merged: false,
      message: expect.stringMatching(/^Pull Request is not mergeable/),
    });
  });
});

describe("what the port makes once", () => {
  const pull = (number: number, state: string) => ({
    number,
    html_url: `https://github.com/acme/api/pull/${number}`,
    state,
    merged_at: null,
    draft: false,
    node_id: `PR_${number}`,
    title: "t",
    body: "b",
    head: { sha: "abc", ref: "lisa/1" },
    base: { ref: "main" },
  });

  it("finds the newest pull request of a branch, a closed one included, and opens none beside it", async () => {
    nock(API)
      .get("/repos/acme/api/pulls")
      .query({ head: "acme:lisa/1", base: "main", state: "all", per_page: 100 })
      .reply(200, [pull(3, "open"), pull(5, "closed")]);
    // No POST is answered: opening one would fail the test (strict nock).
    expect(await port().ensurePullRequest(REF, { title: "t", body: "b", head: "lisa/1", base: "main" })).toMatchObject({
      number: 5,
      state: "closed",
      created: false,
    });
  });

  it("updates the check run a head has, and creates one only where there is none", async () => {
    const report = { title: "Ready for review", summary: "All gates passed.", conclusion: "success" as const };
    // Only this App's: another App's check run named "Lisa" is not Lisa's to update.
    nock(API)
      .get("/repos/acme/api/commits/abc/check-runs")
      .query({ check_name: "Lisa", app_id: APP_ID, per_page: 100 })
      .reply(200, { total_count: 1, check_runs: [{ id: 11, status: "in_progress" }] })
      .patch("/repos/acme/api/check-runs/11", (body: { status?: string; conclusion?: string }) => body.conclusion === "success")
      .reply(200, { id: 11 })
      .get("/repos/acme/api/commits/def/check-runs")
      .query({ check_name: "Lisa", app_id: APP_ID, per_page: 100 })
      .reply(200, { total_count: 0, check_runs: [] })
      .post("/repos/acme/api/check-runs", (body: { head_sha?: string }) => body.head_sha === "def")
      .reply(201, { id: 12 });
    const gh = port();
    expect(await gh.ensureCheckRun(REF, "abc", "Lisa", report)).toBe(11);
    expect(await gh.ensureCheckRun(REF, "def", "Lisa", report)).toBe(12);
  });

  it("writes no check run for a person's token, which GitHub would refuse", async () => {
    const report = { title: "Ready for review", summary: "All gates passed.", conclusion: "success" as const };
    // No route is answered: any request would fail the test (strict nock).
    const gh = port(undefined, API, "ann");
    expect(await gh.ensureCheckRun(REF, "abc", "Lisa", report)).toBeUndefined();
    expect(await gh.findCheckRun(REF, "abc", "Lisa")).toBeUndefined();
    await gh.updateCheckRun(REF, 11, report);
  });
});

describe("readConfig", () => {
  const raw = { "content-type": "application/vnd.github.raw; charset=utf-8" };

  it("reads the owner's .github repository when the repository has none, and follows _extends, earlier keys winning", async () => {
    nock(API).get("/repos/acme/api/contents/.github%2Flisa.yml").reply(404, { message: "Not Found" });
    nock(API)
      .get("/repos/acme/.github/contents/.github%2Flisa.yml")
      .reply(200, "label: bot\n_extends: settings:.github/lisa-base.yml\n", raw);
    nock(API).get("/repos/acme/settings/contents/.github%2Flisa-base.yml").reply(200, "label: lisa\ngates:\n  - npm test\n", raw);

    expect(await port().readConfig(REF)).toEqual({ label: "bot", gates: ["npm test"] });
  });

  it("is null when neither the repository nor its owner has a file", async () => {
    nock(API).get("/repos/acme/api/contents/.github%2Flisa.yml").reply(404, { message: "Not Found" });
    nock(API).get("/repos/acme/.github/contents/.github%2Flisa.yml").reply(404, { message: "Not Found" });

    expect(await port().readConfig(REF)).toBeNull();
  });

  it("names the file that is not valid YAML, as a ConfigError the issue is told about", async () => {
    nock(API).get("/repos/acme/api/contents/.github%2Flisa.yml").reply(200, "label: [lisa\n", raw);

    const error = await failure(port().readConfig(REF));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^`acme\/api:\.github\/lisa\.yml` is not valid YAML: /);
  });
});
