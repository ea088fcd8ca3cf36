import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../dev/temp-dir.ts";
import { createGitHubEmulator } from "../../emulator/github-emulator.ts";

const SCRIPT = fileURLToPath(new URL("../../scripts/validate-requests.ts", import.meta.url));
const validate = (folder: string) =>
  spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", SCRIPT, folder], { encoding: "utf8" });
const line = (exchange: object) => `${JSON.stringify(exchange)}\n`;
const COMMENTS = "/repos/:owner/:repo/issues/:issue_number/comments";

describe("npm run validate-requests", () => {
  it("passes requests GitHub takes on GitHub.com and each GHES release, and counts them", () => {
    const folder = tempDir("requests-valid");
    writeFileSync(
      `${folder}/requests-1.jsonl`,
      line({ method: "POST", route: COMMENTS, path: "/repos/a/b/issues/1/comments", status: 201, sent: { body: "Hi" } }) +
        line({ method: "GET", route: "/repos/:owner/:repo", path: "/repos/a/b", status: 200 }) +
        line({ method: "GET", route: null, path: "/nowhere", status: 404 }),
    );
    const result = validate(folder);
    expect(result.stdout).toContain("2 recorded requests (2 distinct, 2 operations)");
    for (const name of ["api.github.com", "ghes-3.17", "ghes-3.18", "ghes-3.19"])
      expect(result.stdout).toMatch(new RegExp(`${name.replace(".", "\\.")} +2 of 2 valid · 0 distinct problems`));
    expect(result.status).toBe(0);
  });

  it("fails on a body field of the wrong type or one GitHub does not take, and names it", () => {
    const folder = tempDir("requests-invalid");
    writeFileSync(
      `${folder}/requests-1.jsonl`,
      line({
        method: "POST",
        route: COMMENTS,
        path: "/repos/a/b/issues/1/comments",
        status: 201,
        sent: { body: 5, draft: true },
      }),
    );
    const result = validate(folder);
    expect(result.stdout).toContain(`POST ${COMMENTS} body.body: 5, GitHub says string`);
    expect(result.stdout).toContain(`POST ${COMMENTS} body.draft: GitHub does not take it`);
    expect(result.status).toBe(1);
  });

  it("fails when nothing was recorded, rather than passing an empty run", () => {
    const result = validate(tempDir("requests-none"));
    expect(result.stderr).toContain("no recorded requests");
    expect(result.status).toBe(1);
  });

  it("is fed by the emulator with Lisa's requests when LISA_RECORD_REQUESTS names a folder", async () => {
    const folder = tempDir("requests-recorded");
    const github = createGitHubEmulator({ reposRoot: tempDir("requests-repos"), webhookSecret: "s" });
    await github.start();
    // Under `npm run check` the suite's own record is kept in this variable: put it back after.
    const suiteRecord = process.env.LISA_RECORD_REQUESTS;
    process.env.LISA_RECORD_REQUESTS = folder;
    try {
      await github.createRepo("acme/api");
      const issue = await github.createIssue("acme/api", { title: "Add a health check", body: "", user: "ann" });
      const comment = (userAgent: string) =>
        fetch(`${github.url}/repos/acme/api/issues/${issue.number}/comments`, {
          method: "POST",
          headers: {
            authorization: `token ${github.createInstallationToken()}`,
            "content-type": "application/json",
            "user-agent": userAgent,
          },
          body: JSON.stringify({ body: "On it." }),
        });
      expect((await comment("lisa probot/14.3.2 octokit-core.js/7.0.6")).status).toBe(201);
      // A test's own request (malformed ones on purpose, in the emulator's tests) is not Lisa's.
      expect((await comment("octokit-rest.js/22.0.1")).status).toBe(201);
    } finally {
      if (suiteRecord === undefined) delete process.env.LISA_RECORD_REQUESTS;
      else process.env.LISA_RECORD_REQUESTS = suiteRecord;
      await github.stop();
    }
    const result = validate(folder);
    expect(result.stdout).toContain("1 recorded requests (1 distinct, 1 operations)");
    expect(result.status).toBe(0);
  });
});
