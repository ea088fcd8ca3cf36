import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { type OpenApiChecker, openApiChecker } from "../../dev/openapi-check.ts";
import { tempDir } from "../../dev/temp-dir.ts";
import type { Delivery, RecordedRequest } from "../../emulator/github-emulator.ts";

// The emulator and Lisa held to GitHub's published OpenAPI description (@octokit/openapi): every
// route the emulator answers is an operation GitHub has; every request Lisa sends in a run that
// goes round two passes and is accepted is one, with only the body fields GitHub takes, of their
// types, the required ones present; every webhook the emulator sends in that run carries every
// field GitHub's schema for it requires, of its type; and every field of the emulator's answers
// that GitHub documents has GitHub's type. (The emulator answers a subset of each object on
// purpose, so fields GitHub has and the emulator leaves out of an answer are not counted.) The whole suite's requests are
// checked against GHES's descriptions too, by scripts/validate-requests.ts in `npm run check`.

let api: OpenApiChecker;
beforeAll(() => {
  api = openApiChecker("api.github.com");
});

describe("the emulator against GitHub's OpenAPI description", () => {
  it("tells a body GitHub would refuse: a wrong type, a field it does not take, a required one missing", () => {
    const route = "/repos/:owner/:repo/issues/:issue_number/comments";
    expect(api.requestProblems("POST", route, { body: "Hi" })).toEqual([]);
    expect(api.requestProblems("POST", route, { body: 5, bodyy: "Hi" })).toEqual([
      `POST ${route} body.body: 5, GitHub says string`,
      `POST ${route} body.bodyy: GitHub does not take it`,
    ]);
    expect(api.requestProblems("POST", route, {})).toEqual([`POST ${route} body.body: missing, GitHub requires it`]);
    expect(api.requestProblems("POST", "/repos/:owner/:repo/no-such-thing", {})).toEqual([
      "POST /repos/:owner/:repo/no-such-thing: no such operation",
    ]);
  });

  it("answers only operations GitHub has, with the same method and path", async () => {
    const agent = createFakeClaude([]);
    const env = await startEmulatedLisa({ claudeBinary: agent.binary });
    try {
      // GraphQL is not part of the REST description; the review decision is read there.
      const routes = env.github.routes().filter((route) => route.pattern !== "/graphql");
      expect(routes.length).toBeGreaterThan(25);
      expect(
        routes.filter((route) => !api.operationOf(route.method, route.pattern)).map((r) => `${r.method} ${r.pattern}`),
      ).toEqual([]);
    } finally {
      await env.stop();
    }
  });

  describe("in a run that goes round two passes and is accepted", () => {
    const exchanges: { request: RecordedRequest; sent: unknown; answered: unknown }[] = [];
    let deliveries: Delivery[] = [];
    const recordFolder = tempDir("contract-record");
    beforeAll(async () => {
      const agent = createFakeClaude([
        { write: { "health.ts": "v1\n" }, manifest: { title: "Add a health check", what: "v1." } },
        { write: { "health.ts": "v2\n" }, manifest: { title: "Add a health check", what: "v2." } },
      ]);
      const env = await startEmulatedLisa({ claudeBinary: agent.binary });
      // The record scripts/validate-requests.ts checks for the whole suite, kept for this run alone.
      const suiteRecord = process.env.LISA_RECORD_REQUESTS;
      process.env.LISA_RECORD_REQUESTS = recordFolder;
      try {
        const { github } = env;
        github.beforeAnswer((request, bodies) => exchanges.push({ request, sent: bodies.request, answered: bodies.response }));
        await github.createRepo("acme/api", {
          files: { "README.md": "# API\n" },
          config: "label: lisa\ngates:\n  - test -f health.ts\n",
          // CI, for its check_run, check_suite and status webhooks.
          ci: [{ name: "test" }, { name: "ci/lint", as: "status" }],
        });
        github.addCollaborator("acme/api", "ann", "write");
        const issue = await github.createIssue("acme/api", { title: "Add a health check", body: "Add it.", user: "ann" });
        await github.labelIssue("acme/api", issue.number, "lisa", "ann");
        await env.settle();
        const [pull] = github.pulls("acme/api");
        if (!pull) throw new Error("no pull request");
        await github.commentOnIssue("acme/api", pull.number, "/lisa redirect make it v2", "ann");
        await env.settle();
        await github.submitReview("acme/api", pull.number, { state: "APPROVED", body: "", user: "ann" });
        await env.settle();
        deliveries = github.deliveries();
      } finally {
        if (suiteRecord === undefined) delete process.env.LISA_RECORD_REQUESTS;
        else process.env.LISA_RECORD_REQUESTS = suiteRecord;
        await env.stop();
      }
    }, 120_000);

    it("sends only documented operations, with the body fields GitHub takes, of their types", () => {
      const rest = exchanges.filter((e) => e.request.route !== "/graphql");
      expect(rest.length).toBeGreaterThan(20);
      // Every operation Lisa used, so a new one is seen here first.
      const used = [...new Set(rest.map((e) => `${e.request.method} ${e.request.route}`))];
      expect(used.length).toBeGreaterThan(12);
      const problems = rest.flatMap(({ request, sent }) =>
        request.route
          ? api.requestProblems(request.method, request.route, sent)
          : [`${request.method} ${request.path}: no route`],
      );
      expect([...new Set(problems)]).toEqual([]);
    });

    it("names itself Lisa in every request, so the whole suite's record holds each of them", () => {
      const [file, ...others] = readdirSync(recordFolder);
      expect(others).toEqual([]);
      const recorded = readFileSync(path.join(recordFolder, file ?? ""), "utf8")
        .trim()
        .split("\n");
      expect(recorded).toHaveLength(exchanges.filter((e) => e.request.route !== "/graphql").length);
    });

    it("sends each webhook as GitHub's schema for it says: the required fields, of their types", () => {
      const sent = deliveries.filter((d) => d.error !== "not subscribed");
      // Every kind of webhook Lisa got, so a new one is held to its schema here first.
      const kinds = [...new Set(sent.map((d) => (d.action ? `${d.event}.${d.action}` : d.event)))];
      expect(kinds).toEqual(expect.arrayContaining(["issues.labeled", "issue_comment.created", "pull_request_review.submitted"]));
      expect(kinds).toEqual(expect.arrayContaining(["check_run.completed", "check_suite.completed", "status"]));
      const problems = sent.flatMap((delivery) => api.payloadProblems(delivery.event, delivery.action, delivery.payload));
      expect([...new Set(problems)]).toEqual([]);
      // And it would tell: a required field missing, one of the wrong type.
      const labeled = sent.find((d) => d.event === "issues" && d.action === "labeled");
      const issue = { ...(labeled?.payload.issue as object), number: "1" } as Record<string, unknown>;
      delete issue.user;
      expect(api.payloadProblems("issues", "labeled", { ...labeled?.payload, issue })).toEqual([
        "webhook-issues-labeled.issue.user: missing, GitHub requires it",
        'webhook-issues-labeled.issue.number: "1", GitHub says integer',
      ]);
    });

    it("answers each with GitHub's types for every documented field it returns", () => {
      const problems = exchanges
        // A string answer is raw content, asked for with GitHub's raw media type (the config file).
        .filter(
          (e) =>
            e.request.route &&
            e.request.route !== "/graphql" &&
            e.request.status < 300 &&
            e.answered !== undefined &&
            typeof e.answered !== "string",
        )
        .flatMap(({ request, answered }) => api.answerProblems(request.method, request.route ?? "", request.status, answered));
      expect([...new Set(problems)]).toEqual([]);
    });
  });
});
