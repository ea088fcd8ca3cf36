import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { Webhooks } from "@octokit/webhooks";
import { execa } from "execa";
import { Probot, ProbotOctokit } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subscribedEvents } from "../../emulator/app-events.ts";
import { createGitHubEmulator, DEPENDABOT, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { gitIn, tempDir } from "../support/git-fixtures.ts";

const SECRET = "emulator-secret";
const INSTALLATION = 7;
const OWNER = "acme";
const REPO = "widgets";
const FULL_NAME = `${OWNER}/${REPO}`;
const CONFIG = "label: lisa\ngates:\n  - npm test\n";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver that answers 200 and keeps what it was sent. */
async function startReceiver() {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Pushes a commit writing `files` on a new branch of the emulated repository, as Lisa would. */
const mainSha = async (gitDir: string) => (await execa("git", ["-C", gitDir, "rev-parse", "main"])).stdout.trim();

function pushBranch(emulatorRoot: string, branch: string, files: Record<string, string>, fullName = FULL_NAME) {
  const work = tempDir("emulator-work");
  gitIn(work, "clone", "--quiet", path.join(emulatorRoot, `${fullName}.git`), ".");
  gitIn(work, "checkout", "--quiet", "-b", branch);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
    writeFileSync(path.join(work, file), content);
  }
  gitIn(work, "add", "--all");
  gitIn(work, "commit", "--quiet", "-m", `work on ${branch}`);
  gitIn(work, "push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
  rmSync(work, { recursive: true, force: true });
}

/** Octokit logs every failed request; here failures are the point. */
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: { status?: number }) => error.status,
  );

describe("the GitHub emulator", () => {
  let reposRoot: string;
  let emulator: GitHubEmulator;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let octokit: Octokit;

  beforeAll(async () => {
    reposRoot = tempDir("emulator-repos");
    receiver = await startReceiver();
    emulator = createGitHubEmulator({ reposRoot, webhookUrl: receiver.url, webhookSecret: SECRET, installationId: INSTALLATION });
    await emulator.start();
    await emulator.createRepo(FULL_NAME, {
      defaultBranch: "main",
      files: { "README.md": "# Widgets\n", "src/index.ts": "export const answer = 42;\n" },
      description: "Widgets for everyone",
      config: CONFIG,
    });
    await emulator.createRepo(`${OWNER}/secret`, { private: true });
    emulator.addCollaborator(FULL_NAME, "mona", "maintain");
    emulator.addCollaborator(FULL_NAME, "tri", "triage");
    emulator.addCollaborator(FULL_NAME, "writer", "write");
    emulator.addCollaborator(`${OWNER}/secret`, "mona", "write");
    octokit = new Octokit({ baseUrl: emulator.url, auth: emulator.createInstallationToken(), log: quiet });
  });

  afterAll(async () => {
    await emulator.stop();
    await receiver.close();
    rmSync(reposRoot, { recursive: true, force: true });
  });

  describe("serves repository contents", () => {
    it("as raw text with GitHub's raw content type when the raw media type is asked for", async () => {
      const response = await octokit.rest.repos.getContent({
        owner: OWNER,
        repo: REPO,
        path: ".github/lisa.yml",
        mediaType: { format: "raw" },
      });
      expect(response.data).toBe(CONFIG);
      expect(response.headers["content-type"]).toBe("application/vnd.github.raw; charset=utf-8");
    });

    it("as JSON with base64 content otherwise, for a path encoded with %2F", async () => {
      const response = await octokit.request(`GET /repos/${OWNER}/${REPO}/contents/src%2Findex.ts`);
      expect(response.data).toMatchObject({ type: "file", path: "src/index.ts", name: "index.ts", encoding: "base64" });
      expect(Buffer.from(response.data.content, "base64").toString("utf8")).toBe("export const answer = 42;\n");
    });

    it("as a JSON listing for a directory", async () => {
      const { data } = await octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "src" });
      expect(data).toEqual([expect.objectContaining({ type: "file", path: "src/index.ts" })]);
    });

    it("answers 404 for a missing file and an unknown repository", async () => {
      expect(await statusOf(octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path: "nope.txt" }))).toBe(404);
      expect(await statusOf(octokit.rest.repos.get({ owner: OWNER, repo: "nope" }))).toBe(404);
    });
  });

  describe("holds Lisa to GitHub's limits", () => {
    it("refuses a comment body over 65,536 characters with GitHub's 422, and takes one at the limit", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Long", user: "mona" });
      const comment = (body: string) =>
        octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: issue.number, body });
      const refused = await comment("x".repeat(65_537)).catch((error: { status: number; response: { data: unknown } }) => error);
      expect(refused).toMatchObject({
        status: 422,
        response: {
          data: {
            message: "Validation Failed",
            errors: [expect.objectContaining({ field: "body", message: "body is too long (maximum is 65536 characters)" })],
          },
        },
      });
      expect((await comment("x".repeat(65_536))).status).toBe(201);
      expect(emulator.comments(FULL_NAME, issue.number).map((c) => c.body.length)).toEqual([65_536]);
    });

    it("answers late when told to be slow, and acts all the same", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Slow", user: "mona" });
      emulator.injectFault({ method: "POST", path: /\/comments$/, kind: "slow", delayMs: 500 });
      const answered: string[] = [];
      const slow = octokit.rest.issues
        .createComment({ owner: OWNER, repo: REPO, issue_number: issue.number, body: "late" })
        .then(({ status }) => answered.push(`comment ${status}`));
      // A request sent after the slow one is answered before it.
      await octokit.rest.repos.get({ owner: OWNER, repo: REPO }).then(({ status }) => answered.push(`repo ${status}`));
      await slow;
      expect(answered).toEqual(["repo 200", "comment 201"]);
      expect(emulator.comments(FULL_NAME, issue.number).map((c) => c.body)).toEqual(["late"]);
    });
  });

  describe("answers permission questions", () => {
    const permission = async (repo: string, username: string) =>
      (await octokit.rest.repos.getCollaboratorPermissionLevel({ owner: OWNER, repo, username })).data;

    it("with the role in role_name and the legacy level in permission", async () => {
      expect(await permission(REPO, "mona")).toMatchObject({
        role_name: "maintain",
        permission: "write",
        user: { login: "mona" },
      });
      expect(await permission(REPO, "tri")).toMatchObject({ role_name: "triage", permission: "read" });
      expect(await permission(REPO, "writer")).toMatchObject({ role_name: "write", permission: "write" });
      expect(await permission(REPO, OWNER)).toMatchObject({ role_name: "admin", permission: "admin" });
    });

    it("with read for a stranger to a public repository and 404 for one to a private repository", async () => {
      expect(await permission(REPO, "stranger")).toMatchObject({ role_name: "read", permission: "read" });
      expect(await statusOf(permission("secret", "stranger"))).toBe(404);
      expect(await permission("secret", "mona")).toMatchObject({ role_name: "write" });
    });
  });

  describe("keeps issue comments", () => {
    it("creates them as the installation's bot, lists them and updates them", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Comment here", body: "Please", user: "mona" });
      const { data: created } = await octokit.rest.issues.createComment({
        owner: OWNER,
        repo: REPO,
        issue_number: issue.number,
        body: "On it",
      });
      expect(created.user).toMatchObject({ login: "lisa[bot]", type: "Bot" });

      await octokit.rest.issues.updateComment({ owner: OWNER, repo: REPO, comment_id: created.id, body: "Done" });

      const { data: listed } = await octokit.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue.number });
      expect(listed.map((comment) => comment.body)).toEqual(["Done"]);
      expect(emulator.comments(FULL_NAME, issue.number)).toEqual([expect.objectContaining({ id: created.id, body: "Done" })]);
    });

    it("paginates them with a link header that Octokit follows", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Busy", user: "mona" });
      for (let n = 1; n <= 5; n++) await emulator.commentOnIssue(FULL_NAME, issue.number, `comment ${n}`, "mona");

      const first = await octokit.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: issue.number, per_page: 2 });
      expect(first.data.map((comment) => comment.body)).toEqual(["comment 1", "comment 2"]);
      expect(first.headers.link).toContain('rel="next"');
      expect(first.headers.link).toContain("page=3");

      const all = await octokit.paginate(octokit.rest.issues.listComments, {
        owner: OWNER,
        repo: REPO,
        issue_number: issue.number,
        per_page: 2,
      });
      expect(all.map((comment) => comment.body)).toEqual(["comment 1", "comment 2", "comment 3", "comment 4", "comment 5"]);
    });

    it("answers 404 when updating a comment that does not exist", async () => {
      expect(
        await statusOf(octokit.rest.issues.updateComment({ owner: OWNER, repo: REPO, comment_id: 999_999, body: "x" })),
      ).toBe(404);
    });
  });

  describe("manages labels and reactions", () => {
    it("adds labels, lists them, removes one, and answers 404 for a label the issue does not have", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Label me", user: "mona" });
      const { data } = await octokit.rest.issues.addLabels({
        owner: OWNER,
        repo: REPO,
        issue_number: issue.number,
        labels: ["lisa:working", "bug"],
      });
      expect(data.map((label) => label.name)).toEqual(["lisa:working", "bug"]);

      const listed = await octokit.rest.issues.listLabelsOnIssue({ owner: OWNER, repo: REPO, issue_number: issue.number });
      expect(listed.data.map((label) => label.name)).toEqual(["lisa:working", "bug"]);

      await octokit.rest.issues.removeLabel({ owner: OWNER, repo: REPO, issue_number: issue.number, name: "lisa:working" });
      expect(emulator.labels(FULL_NAME, issue.number)).toEqual(["bug"]);

      const missing = octokit.rest.issues.removeLabel({
        owner: OWNER,
        repo: REPO,
        issue_number: issue.number,
        name: "lisa:working",
      });
      await expect(missing).rejects.toMatchObject({ status: 404, message: expect.stringContaining("Label does not exist") });
    });

    it("records reactions, once per content", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "React", user: "mona" });
      const first = await octokit.rest.reactions.createForIssue({
        owner: OWNER,
        repo: REPO,
        issue_number: issue.number,
        content: "eyes",
      });
      const again = await octokit.rest.reactions.createForIssue({
        owner: OWNER,
        repo: REPO,
        issue_number: issue.number,
        content: "eyes",
      });
      expect([first.status, again.status]).toEqual([201, 200]);
      expect(emulator.reactions(FULL_NAME, issue.number)).toEqual([{ content: "eyes", user: "lisa[bot]" }]);
    });
  });

  describe("manages pull requests", () => {
    it("opens one numbered in the issues' sequence, finds it by head and updates it", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Make a PR", user: "mona" });
      pushBranch(reposRoot, "lisa/feature", { "feature.txt": "new\n" });

      const { data: created } = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        title: "Add the feature",
        body: "Closes #1",
        head: "lisa/feature",
        base: "main",
      });
      expect(created).toMatchObject({
        number: issue.number + 1,
        state: "open",
        head: { ref: "lisa/feature" },
        base: { ref: "main" },
      });
      expect(created.user).toMatchObject({ login: "lisa[bot]", type: "Bot" });
      expect(created.html_url).toBe(`${emulator.url}/${FULL_NAME}/pull/${created.number}`);

      const { data: found } = await octokit.rest.pulls.list({
        owner: OWNER,
        repo: REPO,
        head: `${OWNER}:lisa/feature`,
        state: "open",
      });
      expect(found.map((pull) => pull.number)).toEqual([created.number]);
      const { data: none } = await octokit.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:lisa/other` });
      expect(none).toEqual([]);

      await octokit.rest.pulls.update({ owner: OWNER, repo: REPO, pull_number: created.number, title: "Add it", body: "Better" });
      const { data: updated } = await octokit.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: created.number });
      expect(updated).toMatchObject({ title: "Add it", body: "Better" });
      expect(emulator.issue(FULL_NAME, created.number)).toHaveProperty("pull_request");
      expect(await emulator.readFile(FULL_NAME, "feature.txt", "lisa/feature")).toBe("new\n");
    });

    it("refuses with 422 a head branch that does not exist, a second open PR for a head, and a head without commits", async () => {
      pushBranch(reposRoot, "lisa/twice", { "twice.txt": "1\n" });
      const create = (head: string) =>
        octokit.rest.pulls.create({ owner: OWNER, repo: REPO, title: "T", body: "B", head, base: "main" });

      await expect(create("lisa/missing")).rejects.toMatchObject({ status: 422 });
      await create("lisa/twice");
      await expect(create("lisa/twice")).rejects.toMatchObject({
        status: 422,
        message: expect.stringContaining("A pull request already exists for acme:lisa/twice."),
      });
      await expect(create("main")).rejects.toMatchObject({ status: 422, message: expect.stringContaining("No commits between") });
    });

    it("closes the issues a merged pull request's body names with a closing keyword, as GitHub does", async () => {
      const named = await emulator.createIssue(FULL_NAME, { title: "Named", user: "mona" });
      const other = await emulator.createIssue(FULL_NAME, { title: "Only mentioned", user: "mona" });
      pushBranch(reposRoot, "lisa/closing", { "closing.txt": "1\n" });
      const body = `Fixes #${named.number}; see #${other.number}.`;
      const { data: pull } = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        title: "T",
        body,
        head: "lisa/closing",
        base: "main",
      });
      await emulator.mergePull(FULL_NAME, pull.number, { user: "mona" });
      expect(emulator.issue(FULL_NAME, named.number)).toMatchObject({ state: "closed", state_reason: "completed" });
      expect(emulator.issue(FULL_NAME, other.number).state).toBe("open");
      expect(emulator.deliveries().at(-1)).toMatchObject({ event: "issues", action: "closed" });
      // Closed through the API, as Lisa closes one whose plan's last pull request merged.
      await octokit.rest.issues.update({
        owner: OWNER,
        repo: REPO,
        issue_number: other.number,
        state: "closed",
        state_reason: "completed",
      });
      expect(emulator.issue(FULL_NAME, other.number)).toMatchObject({ state: "closed", state_reason: "completed" });
    });

    it("takes a reply to a thread's first comment only, as GitHub does not support replies to replies", async () => {
      pushBranch(reposRoot, "lisa/thread", { "thread.txt": "1\n" });
      const { data: pull } = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        title: "T",
        head: "lisa/thread",
        base: "main",
      });
      const first = await emulator.commentInline(FULL_NAME, pull.number, {
        path: "thread.txt",
        line: 1,
        body: "Why?",
        user: "mona",
      });
      const rootId = (first.payload.comment as { id: number }).id;
      const reply = (commentId: number) =>
        octokit.rest.pulls.createReplyForReviewComment({
          owner: OWNER,
          repo: REPO,
          pull_number: pull.number,
          comment_id: commentId,
          body: "Because.",
        });
      const { data: answer } = await reply(rootId);
      expect(answer.in_reply_to_id).toBe(rootId);
      expect(await statusOf(reply(answer.id))).toBe(422);
    });

    it("shows a push to a pull request's branch late when told to, as GitHub may for a moment", async () => {
      pushBranch(reposRoot, "lisa/late", { "late.txt": "1\n" });
      const { data: pull } = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        title: "T",
        head: "lisa/late",
        base: "main",
      });
      emulator.lagPullHeads(60_000);
      const { sha } = await emulator.pushCommit(FULL_NAME, "lisa/late", {
        files: { "late.txt": "2\n" },
        message: "Two",
        user: "mona",
      });
      const head = async () =>
        (await octokit.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: pull.number })).data.head.sha;
      expect(await head()).toBe(pull.head.sha);
      emulator.lagPullHeads(0);
      expect(await head()).toBe(sha);
    });

    it("refuses a merge as GitHub does: a disallowed method, a missing check or approval (405), a workflow (403), a stale head (409)", async () => {
      const strict = `${OWNER}/strict`;
      await emulator.createRepo(strict, { mergeMethods: ["squash"], requiredChecks: ["ci"], requiredApprovals: 1 });
      emulator.addCollaborator(strict, "mona", "maintain");
      pushBranch(reposRoot, "feature", { "a.txt": "a\n" }, strict);
      const sha = gitIn(path.join(reposRoot, `${strict}.git`), "rev-parse", "feature").trim();
      const { data: pr } = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: "strict",
        head: "feature",
        base: "main",
        title: "A",
      });
      const merge = (method: "merge" | "squash" | "rebase", at = sha, as = octokit) =>
        as.rest.pulls.merge({ owner: OWNER, repo: "strict", pull_number: pr.number, sha: at, merge_method: method }).then(
          () => [200, ""],
          (error: { status: number; response: { data: { message: string } } }) => [error.status, error.response.data.message],
        );
      expect(await merge("merge")).toEqual([405, "Merge commits are not allowed on this repository."]);
      expect(await merge("squash")).toEqual([405, 'Required status check "ci" is expected.']);
      await emulator.addStatus(strict, { sha, context: "ci", state: "success" });
      expect(await merge("squash")).toEqual([405, "At least 1 approving review is required by reviewers with write access."]);
      expect(await merge("squash", "0".repeat(40))).toEqual([409, "Head branch was modified. Review and try the merge again."]);
      const { sha: head } = await emulator.pushCommit(strict, "feature", {
        files: { ".github/workflows/ci.yml": "on: push\n" },
        message: "CI",
        user: "mona",
      });
      await emulator.addStatus(strict, { sha: head, context: "ci", state: "success" });
      await emulator.submitReview(strict, pr.number, { state: "APPROVED", user: "mona" });
      const [status, message] = await merge("squash", head);
      expect([status, message]).toEqual([403, expect.stringContaining("without `workflows` permission")]);
      const person = new Octokit({ baseUrl: emulator.url, auth: emulator.createPersonalToken("mona"), log: quiet });
      expect(await merge("squash", head, person)).toEqual([200, ""]);
      const { data: repo } = await octokit.rest.repos.get({ owner: OWNER, repo: "strict" });
      expect([repo.allow_merge_commit, repo.allow_squash_merge, repo.allow_rebase_merge]).toEqual([false, true, false]);
    });

    it("answers 404 for a pull request number that is an issue", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Just an issue", user: "mona" });
      expect(await statusOf(octokit.rest.pulls.get({ owner: OWNER, repo: REPO, pull_number: issue.number }))).toBe(404);
    });
  });

  describe("keeps check runs", () => {
    it("creates one on a commit, completes it, and lists a commit's by name, as the checks API does", async () => {
      const sha = await mainSha(path.join(reposRoot, `${FULL_NAME}.git`));
      const { data: created } = await octokit.rest.checks.create({
        owner: OWNER,
        repo: REPO,
        name: "Lisa",
        head_sha: sha,
        status: "in_progress",
        output: { title: "Working", summary: "On it." },
      });
      expect(created).toMatchObject({ name: "Lisa", head_sha: sha, status: "in_progress", conclusion: null });
      await octokit.rest.checks.update({ owner: OWNER, repo: REPO, check_run_id: created.id, conclusion: "success" });
      const { data: listed } = await octokit.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: sha, check_name: "Lisa" });
      expect(listed.check_runs.map((run) => [run.id, run.status, run.conclusion, run.output.title])).toEqual([
        [created.id, "completed", "success", "Working"],
      ]);
      const { data: other } = await octokit.rest.checks.listForRef({ owner: OWNER, repo: REPO, ref: sha, check_name: "CI" });
      expect(other.total_count).toBe(0);
    });

    it("lists only an App's own when asked by `app_id`, as a CI App's check of the same name is not Lisa's", async () => {
      const sha = await mainSha(path.join(reposRoot, `${FULL_NAME}.git`));
      const { data: own } = await octokit.rest.checks.create({ owner: OWNER, repo: REPO, name: "Lisa", head_sha: sha });
      const theirs = await emulator.addCheckRun(FULL_NAME, { sha, name: "Lisa", appId: 999, conclusion: "failure" });
      const listed = async (appId?: number) =>
        (
          await octokit.rest.checks.listForRef({
            owner: OWNER,
            repo: REPO,
            ref: sha,
            check_name: "Lisa",
            ...(appId ? { app_id: appId } : {}),
          })
        ).data.check_runs
          // Earlier tests reported on this commit too.
          .filter((run) => run.id === own.id || run.id === theirs.id)
          .map((run) => [run.id, run.app?.id]);
      expect(await listed()).toEqual([
        [theirs.id, 999],
        [own.id, own.app?.id],
      ]);
      expect(await listed(own.app?.id)).toEqual([[own.id, own.app?.id]]);
      expect(await listed(999)).toEqual([[theirs.id, 999]]);
    });

    it("pages a commit's check runs, suites and statuses as GitHub does: at most 100 a page, with Link headers", async () => {
      const sha = await mainSha(path.join(reposRoot, `${FULL_NAME}.git`));
      for (let i = 0; i < 105; i += 1) {
        await emulator.addCheckRun(FULL_NAME, { sha, name: `paged ${i}`, appId: 55, conclusion: "success" });
        await emulator.addStatus(FULL_NAME, { sha, context: `paged/${i}`, state: "success" });
      }
      const ref = { owner: OWNER, repo: REPO, ref: sha };
      const first = await octokit.rest.checks.listForRef({ ...ref, per_page: 500 });
      expect(first.data.check_runs).toHaveLength(100);
      expect(first.data.total_count).toBeGreaterThanOrEqual(105);
      expect(first.headers.link).toMatch(/[?&]page=2[^>]*>; rel="next"/);
      const second = await octokit.rest.checks.listForRef({ ...ref, per_page: 100, page: 2 });
      expect(second.data.check_runs.length).toBe(first.data.total_count - 100);
      expect(second.headers.link).not.toMatch(/rel="next"/);
      expect((await octokit.rest.checks.listForRef(ref)).data.check_runs).toHaveLength(30);
      const combined = await octokit.rest.repos.getCombinedStatusForRef(ref);
      expect(combined.data.statuses).toHaveLength(100);
      expect(combined.data.total_count).toBe(105);
      expect(combined.headers.link).toMatch(/rel="next"/);
      const suites = await octokit.rest.checks.listSuitesForRef({ ...ref, per_page: 1 });
      expect(suites.data.check_suites.length).toBeLessThanOrEqual(1);
    });

    it("refuses a commit it does not have, and a completed run without a conclusion", async () => {
      const sha = await mainSha(path.join(reposRoot, `${FULL_NAME}.git`));
      // Bodies Octokit's types would refuse: the point is what the emulator answers to them.
      const create = (fields: object) =>
        statusOf(octokit.request(`POST /repos/${FULL_NAME}/check-runs`, { name: "Lisa", ...fields }));
      expect(await create({ head_sha: "0".repeat(40) })).toBe(422);
      expect(await create({ head_sha: sha, status: "completed" })).toBe(422);
      expect(await create({ head_sha: sha, conclusion: "passed" })).toBe(422);
    });

    it("makes at every push an empty queued suite for each App with `checks: write`, which an App's check run joins", async () => {
      pushBranch(reposRoot, "suites", { "s.txt": "0\n" });
      const { sha } = await emulator.pushCommit(FULL_NAME, "suites", { files: { "s.txt": "s\n" }, message: "s", user: "mona" });
      const suites = async () =>
        (await octokit.rest.checks.listSuitesForRef({ owner: OWNER, repo: REPO, ref: sha })).data.check_suites
          .map((suite) => [suite.app?.id, suite.status, suite.conclusion, suite.latest_check_runs_count])
          .sort(([a], [b]) => Number(a) - Number(b));
      // Lisa's App (1, as no JWT named another) and Dependabot's, neither of which has reported anything.
      expect(await suites()).toEqual([
        [1, "queued", null, 0],
        [DEPENDABOT.id, "queued", null, 0],
      ]);
      const { data: run } = await octokit.rest.checks.create({ owner: OWNER, repo: REPO, name: "Lisa", head_sha: sha });
      expect(await suites()).toEqual([
        [1, "in_progress", null, 1],
        [DEPENDABOT.id, "queued", null, 0],
      ]);
      await octokit.rest.checks.update({ owner: OWNER, repo: REPO, check_run_id: run.id, conclusion: "success" });
      expect((await suites())[0]).toEqual([1, "completed", "success", 1]);
    });

    it("refuses with 403 to update another App's check run, as GitHub does", async () => {
      const sha = await mainSha(path.join(reposRoot, `${FULL_NAME}.git`));
      const theirs = await emulator.addCheckRun(FULL_NAME, { sha, name: "build", appId: 999 });
      const update = octokit.rest.checks.update({ owner: OWNER, repo: REPO, check_run_id: theirs.id, conclusion: "success" });
      await expect(update).rejects.toMatchObject({
        status: 403,
        message: expect.stringContaining(
          "Invalid app_id `999` - check run can only be modified by the GitHub App that created it.",
        ),
      });
      expect(emulator.checkRuns(FULL_NAME).find((run) => run.id === theirs.id)).toMatchObject({ status: "in_progress" });
    });

    it("takes a commit status from whoever may push, through POST /statuses/{sha}, and refuses the others as GitHub does", async () => {
      const sha = await mainSha(path.join(reposRoot, `${FULL_NAME}.git`));
      const as = (login: string) => new Octokit({ baseUrl: emulator.url, auth: emulator.createPersonalToken(login), log: quiet });
      // Bodies Octokit's types would refuse: the point is what the emulator answers to them.
      const post = (client: Octokit, fields: Record<string, unknown>, at = sha) =>
        client.request(`POST /repos/${FULL_NAME}/statuses/${at}`, fields);
      const { status, data } = await post(as("writer"), { state: "failure", context: "ci/deploy", description: "Red" });
      expect([status, data.state, data.context, data.description]).toEqual([201, "failure", "ci/deploy", "Red"]);
      expect(
        emulator
          .statuses(FULL_NAME)
          .filter((s) => s.context === "ci/deploy")
          .map((s) => [s.sha, s.state]),
      ).toEqual([[sha, "failure"]]);
      await emulator.waitForWebhooks();
      const sent = receiver.received.map((r) => JSON.parse(r.body)).filter((p) => p.context === "ci/deploy");
      expect(sent.map((p) => [p.sha, p.state, p.sender.login])).toEqual([[sha, "failure", "writer"]]);
      // A person without push access (triage) is told nothing is there; Lisa's installation holds `statuses: read` only.
      expect(await statusOf(post(as("tri"), { state: "success", context: "ci/deploy" }))).toBe(404);
      expect(await statusOf(post(octokit, { state: "success", context: "ci/deploy" }))).toBe(403);
      expect(await statusOf(post(as("mona"), { state: "green" }))).toBe(422);
      expect(await statusOf(post(as("mona"), { state: "success" }, "0".repeat(40)))).toBe(422);
      expect(emulator.statuses(FULL_NAME).filter((s) => s.context === "ci/deploy")).toHaveLength(1);
      // The test's own helper writes through the same code: a bad state is refused there too.
      await expect(emulator.addStatus(FULL_NAME, { sha, context: "x", state: "green" as "success" })).rejects.toThrow();
    });

    it("takes a commit status from an installation granted `statuses: write`", async () => {
      const root = tempDir("emulator-statuses");
      const ci = createGitHubEmulator({ reposRoot: root, webhookSecret: SECRET, permissions: { statuses: "write" } });
      await ci.start();
      try {
        await ci.createRepo("acme/plain", { files: { "README.md": "# Plain\n" } });
        const client = new Octokit({ baseUrl: ci.url, auth: ci.createInstallationToken(), log: quiet });
        const sha = await mainSha(path.join(root, "acme/plain.git"));
        await client.rest.repos.createCommitStatus({ owner: "acme", repo: "plain", sha, state: "success", context: "ci" });
        expect(ci.statuses("acme/plain").map((s) => [s.sha, s.context, s.state])).toEqual([[sha, "ci", "success"]]);
      } finally {
        await ci.stop();
      }
    });

    it("answers 403 to an installation without `checks: write`", async () => {
      const root = tempDir("emulator-no-checks");
      const bare = createGitHubEmulator({ reposRoot: root, webhookSecret: SECRET, permissions: { contents: "write" } });
      await bare.start();
      try {
        await bare.createRepo("acme/plain", { files: { "README.md": "# Plain\n" } });
        const client = new Octokit({ baseUrl: bare.url, auth: bare.createInstallationToken(), log: quiet });
        const sha = await mainSha(path.join(root, "acme/plain.git"));
        const refused = client.rest.checks.create({ owner: "acme", repo: "plain", name: "Lisa", head_sha: sha });
        await expect(refused).rejects.toMatchObject({
          status: 403,
          message: expect.stringContaining("Resource not accessible by integration"),
        });
      } finally {
        await bare.stop();
      }
    });
  });

  describe("serves job logs as GitHub does", () => {
    it("answers a job log with a 302 to a signed URL on another host, which wants no token and refuses an expired or forged one", async () => {
      let clock = Date.now();
      const root = tempDir("emulator-logs");
      const ci = createGitHubEmulator({ reposRoot: root, webhookSecret: SECRET, tokenClock: () => clock });
      await ci.start();
      try {
        await ci.createRepo("acme/built", { files: { "README.md": "# Built\n" }, ci: [{ name: "test" }] });
        const { sha } = await ci.pushCommit("acme/built", "main", { files: { "a.ts": "a\n" }, message: "a", user: "ann" });
        await ci.waitForWebhooks();
        const job = ci.checkRuns("acme/built").find((run) => run.head_sha === sha && run.name === "test");
        const token = ci.createInstallationToken();
        const asked = await fetch(`${ci.url}/repos/acme/built/actions/jobs/${job?.id}/logs`, {
          headers: { authorization: `token ${token}` },
          redirect: "manual",
        });
        expect(asked.status).toBe(302);
        const location = new URL(asked.headers.get("location") ?? "");
        expect(location.origin).not.toBe(new URL(ci.url).origin);
        const download = await fetch(location);
        expect([download.status, await download.text()]).toEqual([200, expect.stringContaining("> npm test")]);
        // The signed URL is the credential: a token sent along is refused, as is a signature changed or expired.
        expect((await fetch(location, { headers: { authorization: `token ${token}` } })).status).toBe(403);
        const forged = new URL(location);
        forged.searchParams.set("expires", String(clock + 3_600_000));
        expect((await fetch(forged)).status).toBe(403);
        clock += 61_000;
        expect((await fetch(location)).status).toBe(403);
        expect(ci.logDownloads().map((d) => [d.authorization, d.status])).toEqual([
          [false, 200],
          [true, 403],
          [false, 403],
          [false, 403],
        ]);
        // A job that has no log is a 404 at the API, as before.
        const missing = await fetch(`${ci.url}/repos/acme/built/actions/jobs/1/logs`, {
          headers: { authorization: `token ${token}` },
        });
        expect(missing.status).toBe(404);
      } finally {
        await ci.stop();
      }
    });
  });

  describe("sends webhooks", () => {
    const webhooks = new Webhooks({ secret: SECRET });
    const lastReceived = () => {
      const last = receiver.received.at(-1);
      if (!last) throw new Error("no webhook received");
      return { ...last, payload: JSON.parse(last.body) };
    };

    it("signs an issues.labeled delivery so @octokit/webhooks verifies it", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Fix the typo", body: "In the README", user: "mona" });
      const delivery = await emulator.labelIssue(FULL_NAME, issue.number, "lisa", "mona");

      expect(delivery).toMatchObject({ event: "issues", action: "labeled", status: 200 });
      const { headers, body, payload } = lastReceived();
      expect(headers["x-github-event"]).toBe("issues");
      expect(headers["x-github-delivery"]).toBe(delivery.id);
      expect(headers["content-type"]).toBe("application/json");
      expect(await webhooks.verify(body, String(headers["x-hub-signature-256"]))).toBe(true);
      expect(await webhooks.verify(body, "sha256=0000")).toBe(false);
      expect(payload).toMatchObject({
        action: "labeled",
        issue: { number: issue.number, title: "Fix the typo", body: "In the README", user: { login: "mona", type: "User" } },
        label: { name: "lisa" },
        repository: { name: REPO, full_name: FULL_NAME, owner: { login: OWNER }, default_branch: "main", private: false },
        sender: { login: "mona", type: "User" },
        installation: { id: INSTALLATION },
      });
      expect(payload.issue.labels).toEqual([expect.objectContaining({ name: "lisa" })]);
      expect(payload.issue.pull_request).toBeUndefined();
      expect(payload.repository.clone_url).toBe(`${emulator.gitBaseUrl}/${FULL_NAME}.git`);
    });

    it("sends issues.closed as GitHub does: the issue closed with its reason and time, no label", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Close me", user: "mona" });
      expect(emulator.issue(FULL_NAME, issue.number)).toMatchObject({ state: "open", state_reason: null, closed_at: null });
      const delivery = await emulator.closeIssue(FULL_NAME, issue.number, "mona", "not_planned");

      expect(delivery).toMatchObject({ event: "issues", action: "closed", status: 200 });
      const { payload } = lastReceived();
      expect(payload).toMatchObject({
        action: "closed",
        issue: { number: issue.number, state: "closed", state_reason: "not_planned", closed_at: expect.any(String) },
        sender: { login: "mona", type: "User" },
        installation: { id: INSTALLATION },
      });
      expect(payload.label).toBeUndefined();
      expect(payload.issue.closed_at).toBe(payload.issue.updated_at);
      await expect(emulator.closeIssue(FULL_NAME, issue.number, "mona")).rejects.toThrow(/closed already/);
    });

    it("sends only the events app.yml subscribes to: a push is not, its pull_request.synchronize is", async () => {
      expect(subscribedEvents()).toEqual([
        "issues",
        "issue_comment",
        "pull_request",
        "pull_request_review",
        "pull_request_review_comment",
        "check_run",
        "check_suite",
        "status",
      ]);
      pushBranch(reposRoot, "lisa/pushed", { "p.txt": "1\n" });
      const pull = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        head: "lisa/pushed",
        base: "main",
        title: "Pushed",
      });
      await emulator.waitForWebhooks();
      const before = receiver.received.length;
      const { deliveries } = await emulator.pushCommit(FULL_NAME, "lisa/pushed", {
        files: { "p.txt": "2\n" },
        message: "Two",
        user: "mona",
      });
      expect(deliveries.map((d) => [d.event, d.action ?? null, d.status, d.error ?? null])).toEqual([
        ["push", null, null, "not subscribed"],
        ["pull_request", "synchronize", 200, null],
      ]);
      expect(receiver.received.slice(before).map((r) => r.headers["x-github-event"])).toEqual(["pull_request"]);
      expect(emulator.deliveries().some((d) => d.event === "push")).toBe(false);
      expect(lastReceived().payload.number).toBe(pull.data.number);
    });

    it("sends issue_comment.created for a comment on a pull request, with the issue marked as one", async () => {
      pushBranch(reposRoot, "lisa/commented", { "c.txt": "c\n" });
      const { data: pull } = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        title: "C",
        head: "lisa/commented",
        base: "main",
      });
      const delivery = await emulator.commentOnIssue(FULL_NAME, pull.number, "Looks good, one nit", "mona");

      expect(delivery).toMatchObject({ event: "issue_comment", action: "created", status: 200 });
      expect(lastReceived().payload).toMatchObject({
        issue: { number: pull.number, pull_request: { html_url: pull.html_url } },
        comment: { body: "Looks good, one nit", user: { login: "mona" } },
        sender: { login: "mona" },
      });
    });

    it("sends pull_request_review.submitted with GitHub's lower-case review state", async () => {
      pushBranch(reposRoot, "lisa/reviewed", { "r.txt": "r\n" });
      const { data: pull } = await octokit.rest.pulls.create({
        owner: OWNER,
        repo: REPO,
        title: "R",
        head: "lisa/reviewed",
        base: "main",
      });
      const delivery = await emulator.submitReview(FULL_NAME, pull.number, {
        state: "CHANGES_REQUESTED",
        body: "Rename it",
        user: "mona",
      });

      expect(delivery).toMatchObject({ event: "pull_request_review", action: "submitted", status: 200 });
      expect(lastReceived().payload).toMatchObject({
        review: { state: "changes_requested", body: "Rename it", user: { login: "mona" } },
        pull_request: { number: pull.number, head: { ref: "lisa/reviewed" }, base: { ref: "main" }, html_url: pull.html_url },
      });
      expect(emulator.reviews(FULL_NAME, pull.number)).toEqual([expect.objectContaining({ state: "CHANGES_REQUESTED" })]);
    });

    it("sends the webhooks an API change causes, with the bot as sender", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Quiet", user: "mona" });
      await octokit.rest.issues.createComment({
        owner: OWNER,
        repo: REPO,
        issue_number: issue.number,
        body: "Hello from the bot",
      });
      await emulator.waitForWebhooks();

      expect(emulator.deliveries().at(-1)).toMatchObject({
        event: "issue_comment",
        action: "created",
        status: 200,
        payload: { sender: { login: "lisa[bot]", type: "Bot" }, comment: { body: "Hello from the bot" } },
      });
    });

    it("redelivers a delivery with the same GUID", async () => {
      const [first] = emulator.deliveries();
      if (!first) throw new Error("no deliveries yet");
      const again = await emulator.redeliver(first.id);
      expect(again).toMatchObject({ id: first.id, event: first.event, status: 200 });
      expect(lastReceived().headers["x-github-delivery"]).toBe(first.id);
    });

    it("keeps the App's delivery log, newest first and cursor-paged, and redelivers an attempt asked for", async () => {
      const issue = await emulator.createIssue(FULL_NAME, { title: "Logged", user: "mona" });
      for (const label of ["a", "b", "c"]) await emulator.labelIssue(FULL_NAME, issue.number, label, "mona");
      const jwt = `e30.${Buffer.from(JSON.stringify({ iss: 1 })).toString("base64url")}.sig`;
      const asApp = new Octokit({ baseUrl: emulator.url, auth: jwt, log: quiet });
      const first = await asApp.rest.apps.listWebhookDeliveries({ per_page: 2 });
      expect(first.data).toHaveLength(2);
      const [newest, older] = first.data;
      expect((newest?.id ?? 0) > (older?.id ?? 0)).toBe(true);
      expect(newest).toMatchObject({ guid: expect.any(String), status_code: 200, redelivery: expect.any(Boolean) });
      const next = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? "")?.[1] ?? "";
      expect(next).toMatch(/cursor=\d+/);
      expect(next).not.toMatch(/[?&]page=/);
      const second = await asApp.request(`GET ${next}`);
      expect((second.data as { id: number }[])[0]?.id).toBeLessThan(older?.id ?? 0);
      const before = emulator.deliveries().length;
      const asked = await asApp.rest.apps.redeliverWebhookDelivery({ delivery_id: older?.id ?? 0 });
      expect(asked.status).toBe(202);
      await emulator.waitForWebhooks();
      expect(emulator.deliveries().slice(before)).toEqual([
        expect.objectContaining({ id: older?.guid, redelivery: true, status: 200 }),
      ]);
    });
  });

  describe("keeps a log of requests", () => {
    it("answers 404 to a route it does not know and records it as unmatched", async () => {
      expect(await statusOf(octokit.request("GET /repos/{owner}/{repo}/branches", { owner: OWNER, repo: REPO }))).toBe(404);
      expect(emulator.requests().at(-1)).toEqual({
        method: "GET",
        path: `/repos/${FULL_NAME}/branches`,
        status: 404,
        route: null,
        arrivedAt: expect.any(Number),
      });
    });

    it("answers 401 to a request without an installation token", async () => {
      const anonymous = new Octokit({ baseUrl: emulator.url, log: quiet });
      expect(await statusOf(anonymous.rest.repos.get({ owner: OWNER, repo: REPO }))).toBe(401);
    });
  });

  describe("serves git over HTTP", () => {
    /** `git <args>` with the Basic credentials of `token` (none when undefined), as Lisa sends them. */
    const gitWith = (token: string | undefined, args: string[], cwd = tempDir("git-http")) =>
      execa(
        "git",
        [...(token ? ["-c", `http.extraHeader=Authorization: Basic ${btoa(`x-access-token:${token}`)}`] : []), ...args],
        { cwd, env: { GIT_TERMINAL_PROMPT: "0" }, reject: false },
      );

    it("lets an installation token clone and push, and records the push in the bare repository", async () => {
      const token = emulator.createInstallationToken();
      const work = tempDir("git-http-work");
      expect((await gitWith(token, ["clone", "--quiet", `${emulator.gitBaseUrl}/${FULL_NAME}.git`, "."], work)).exitCode).toBe(0);
      gitIn(work, "checkout", "--quiet", "-b", "over-http");
      writeFileSync(path.join(work, "http.txt"), "pushed over HTTP\n");
      gitIn(work, "add", "http.txt");
      gitIn(work, "-c", "user.name=Lisa", "-c", "user.email=lisa@example.com", "commit", "--quiet", "-m", "over HTTP");
      const pushed = await gitWith(token, ["push", "--quiet", "origin", "HEAD:refs/heads/over-http"], work);
      expect(pushed.stderr).toBe("");
      expect(gitIn(emulator.gitDir(FULL_NAME), "show", "over-http:http.txt")).toBe("pushed over HTTP\n");
    });

    describe("refuses, as GitHub does, an App's push that changes a workflow without the `workflows` permission", () => {
      const REFUSAL =
        "! [remote rejected] HEAD -> ci-change (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission)";

      /** A clone of the repository with one commit writing `files` on top of main, pushed with `token`. */
      async function pushWith(target: GitHubEmulator, token: string, files: Record<string, string>, branch = "ci-change") {
        const work = tempDir("git-http-workflow");
        await gitWith(token, ["clone", "--quiet", `${target.gitBaseUrl}/${FULL_NAME}.git`, "."], work);
        for (const [file, content] of Object.entries(files)) {
          mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
          writeFileSync(path.join(work, file), content);
        }
        gitIn(work, "add", "--all");
        gitIn(work, "-c", "user.name=Lisa", "-c", "user.email=lisa@example.com", "commit", "--quiet", "-m", "work");
        return gitWith(token, ["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], work);
      }

      it("refuses an installation token, and takes the same push from a person's token and other changes from the App", async () => {
        const ci = { ".github/workflows/ci.yml": "on: push\n" };
        const refused = await pushWith(emulator, emulator.createInstallationToken(), ci);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stderr).toContain(REFUSAL);
        expect(gitIn(emulator.gitDir(FULL_NAME), "branch", "--list", "ci-change")).toBe("");

        const other = await pushWith(emulator, emulator.createInstallationToken(), { "docs/ci.md": "CI\n" }, "docs-change");
        expect(other.stderr).toBe("");
        expect(gitIn(emulator.gitDir(FULL_NAME), "show", "docs-change:docs/ci.md")).toBe("CI\n");

        const person = await pushWith(emulator, emulator.createPersonalToken("mona"), ci);
        expect(person.stderr).toBe("");
        expect(gitIn(emulator.gitDir(FULL_NAME), "show", "ci-change:.github/workflows/ci.yml")).toBe("on: push\n");
      });

      it("takes it from an installation granted `workflows: write`", async () => {
        const granted = createGitHubEmulator({
          reposRoot: tempDir("git-http-repos"),
          webhookSecret: SECRET,
          permissions: { contents: "write", workflows: "write" },
        });
        await granted.start();
        try {
          await granted.createRepo(FULL_NAME);
          const pushed = await pushWith(granted, granted.createInstallationToken(), { ".github/workflows/ci.yml": "on: push\n" });
          expect(pushed.stderr).toBe("");
          expect(gitIn(granted.gitDir(FULL_NAME), "show", "ci-change:.github/workflows/ci.yml")).toBe("on: push\n");
        } finally {
          await granted.stop();
        }
      });
    });

    it("refuses git without a token, with a token it never handed out, and with one that has expired", async () => {
      // The token's hour passes on a clock the test moves, not in wall time git must beat under load.
      let now = Date.parse("2026-01-01T12:00:00Z");
      const shortLived = createGitHubEmulator({
        reposRoot: tempDir("git-http-repos"),
        webhookSecret: SECRET,
        tokenClock: () => now,
      });
      await shortLived.start();
      try {
        await shortLived.createRepo(FULL_NAME);
        const url = `${shortLived.gitBaseUrl}/${FULL_NAME}.git`;
        const token = shortLived.createInstallationToken();
        expect((await gitWith(token, ["ls-remote", url])).exitCode).toBe(0);
        now += 59 * 60_000;
        expect((await gitWith(token, ["ls-remote", url])).exitCode).toBe(0);
        now += 60_000;
        for (const refused of [token, undefined, "ghs_000000000000000000000000000000000000"]) {
          const answer = await gitWith(refused, ["ls-remote", url]);
          expect(answer.exitCode).not.toBe(0);
          // What git says against github.com with a stale token and prompts off.
          expect(answer.stderr).toContain("could not read Username");
        }
        // The REST API still takes the token: Probot caches it for 59 minutes of GitHub's 60.
        const api = new Octokit({ baseUrl: shortLived.url, auth: token, log: quiet });
        expect(await statusOf(api.rest.repos.get({ owner: OWNER, repo: REPO }))).toBe(200);
      } finally {
        await shortLived.stop();
      }
    });
  });

  describe("lays the API out as GitHub Enterprise Server in GHES mode", () => {
    it("answers REST under /api/v3 and GraphQL at /api/graphql, and 404 without the prefix", async () => {
      const ghes = createGitHubEmulator({ reposRoot: tempDir("ghes-repos"), webhookSecret: SECRET, ghes: true });
      await ghes.start();
      try {
        await ghes.createRepo(FULL_NAME);
        const auth = ghes.createInstallationToken();
        expect(ghes.apiUrl).toBe(`${ghes.url}/api/v3`);
        const prefixed = new Octokit({ baseUrl: ghes.apiUrl, auth, log: quiet });
        expect((await prefixed.rest.repos.get({ owner: OWNER, repo: REPO })).data.full_name).toBe(FULL_NAME);
        // Octokit derives /api/graphql from a /api/v3 base, as it does for a real GHES host.
        const { repository } = await prefixed.graphql<{ repository: { pullRequest: null } }>(
          "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { reviewDecision } } }",
          { owner: OWNER, name: REPO, number: 99 },
        );
        expect(repository.pullRequest).toBeNull();
        const bare = new Octokit({ baseUrl: ghes.url, auth, log: quiet });
        expect(await statusOf(bare.rest.repos.get({ owner: OWNER, repo: REPO }))).toBe(404);
      } finally {
        await ghes.stop();
      }
    });
  });

  describe("conditional reads", () => {
    it("answers a raw file read that holds its ETag with 304 and no body", async () => {
      const read = (etag?: string) =>
        octokit.request("GET /repos/{owner}/{repo}/contents/{path}", {
          owner: OWNER,
          repo: REPO,
          path: ".github/lisa.yml",
          mediaType: { format: "raw" },
          headers: etag ? { "if-none-match": etag } : {},
        });
      const first = await read();
      expect(first.headers.etag).toMatch(/^W\/"[0-9a-f]{40}"$/);
      expect(await statusOf(read(first.headers.etag))).toBe(304);
      expect((await read('W/"stale"')).data).toBe(first.data);
    });

    it("records the ETag each read held, and none for a read without one", async () => {
      const from = emulator.requests().length;
      const path = ".github/lisa.yml";
      const read = (headers: Record<string, string>) =>
        octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { owner: OWNER, repo: REPO, path, headers });
      await read({});
      await statusOf(read({ "if-none-match": 'W/"stale"' }));
      const reads = emulator.requests().slice(from);
      expect(reads.map((r) => r.ifNoneMatch)).toEqual([undefined, 'W/"stale"']);
      expect(reads[0]).not.toHaveProperty("ifNoneMatch");
    });
  });

  describe("works as Probot's GitHub", () => {
    it("hands an installation token to Probot's auth and serves its config loader", async () => {
      const { privateKey } = generateKeyPairSync("rsa", {
        modulusLength: 2048,
        privateKeyEncoding: { type: "pkcs1", format: "pem" },
        publicKeyEncoding: { type: "spki", format: "pem" },
      });
      const probot = new Probot({
        appId: 4242,
        privateKey,
        secret: SECRET,
        baseUrl: emulator.url,
        logLevel: "fatal",
        Octokit: ProbotOctokit.defaults((options: object) => ({
          ...options,
          retry: { enabled: false },
          throttle: { enabled: false },
        })),
      });
      const installation = await probot.auth(INSTALLATION);

      const { config } = await installation.config.get({ owner: OWNER, repo: REPO, path: ".github/lisa.yml" });
      expect(config).toEqual({ label: "lisa", gates: ["npm test"] });

      // Probot's auth ignores baseUrl when asked for the token directly; it answers from its cache here.
      const { token } = (await installation.auth({ type: "installation" })) as { token: string };
      expect(token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
      expect(emulator.requests()).toContainEqual(
        expect.objectContaining({ method: "POST", path: `/app/installations/${INSTALLATION}/access_tokens`, status: 201 }),
      );
    });
  });
});
