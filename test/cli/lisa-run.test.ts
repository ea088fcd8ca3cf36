import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { runLisaCommand } from "../support/lisa-command.ts";

// `lisa run owner/repo#N` (issue 11): one issue from a terminal with a person's token, no App and
// no webhook, against the emulator laid out as a GitHub Enterprise Server host.

let github: GitHubEmulator | undefined;
afterEach(async () => {
  await github?.stop();
  github = undefined;
});

describe("lisa run", () => {
  it("takes an issue to a pull request waiting for review, acting as the token's person, and shows its progress", async () => {
    github = createGitHubEmulator({ reposRoot: tempDir("lisa-run-repos"), webhookSecret: "unused", ghes: true });
    await github.start();
    await github.createRepo("acme/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("acme/api", "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", body: "Expose /health.", user: "ann" });
    const agent = createFakeClaude([
      { write: { "health.ts": "ok\n" }, manifest: { title: "Add a health endpoint", what: "GET /health." } },
    ]);

    const result = await runLisaCommand(["run", `acme/api#${issue.number}`], {
      GITHUB_TOKEN: github.createPersonalToken("ann"),
      GHE_HOST: new URL(github.url).host,
      GHE_PROTOCOL: "http",
      LISA_DATA_DIR: path.join(tempDir("lisa-run-data"), "data"),
      LISA_CLAUDE_PATH: agent.binary,
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const [pull] = github.pulls("acme/api");
    expect(pull?.user.login).toBe("ann");
    expect(await github.readFile("acme/api", "health.ts", pull?.head.ref ?? "")).toBe("ok\n");
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(/^Lisa on acme\/api#1 “Add a health endpoint”, as @ann; data in /);
    expect(lines.some((line) => /^ +\d+ s {2}run running$/.test(line))).toBe(true);
    expect(lines.some((line) => /^ +\d+ s {2}claude session \(implement\) in acme\/api$/.test(line))).toBe(true);
    expect(lines.some((line) => line.endsWith(`  pull request ${pull?.html_url}`))).toBe(true);
    // Writing check runs is for Apps: GitHub refuses it to her token, so none is asked for. (Reading
    // them, for the pull request's CI, is open to her token.)
    expect(
      github
        .requests()
        .filter((r) => r.path.includes("/check-runs") && r.method !== "GET")
        .map((r) => `${r.method} ${r.status}`),
    ).toEqual([]);
    // GitHub refuses to ask a pull request's author for review; she is not asked.
    expect(github.requests().filter((r) => r.path.endsWith("/requested_reviewers"))).toEqual([]);
    expect(lines.at(-1)).toMatch(/^Waiting for review\. Approving and `\/lisa redirect` need the App installed/);
    // The tracking comment is ann's (her token wrote it), and only one was written.
    const tracking = github.comments("acme/api", issue.number).filter((c) => c.body.includes("Ready for review"));
    expect(tracking.map((c) => c.user.login)).toEqual(["ann"]);
  });

  it("says what is missing: a target, a token", async () => {
    const none = await runLisaCommand(["run", "acme/api"], {});
    expect(none.status).toBe(2);
    expect(none.stderr).toContain("usage: lisa run owner/repo#N");
    const tokenless = await runLisaCommand(["run", "acme/api#1"], {});
    expect(tokenless.status).toBe(2);
    expect(tokenless.stderr).toBe("lisa run: set GITHUB_TOKEN (or GH_TOKEN) to a token with write access to acme/api.");
  });
});
