import { afterEach, describe, expect, it } from "vitest";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { createGitHubPort } from "../../src/github/create-github-port.ts";
import { LisaOctokit } from "../../src/github/lisa-octokit.ts";
import { commentOnce, ensureComment } from "../../src/publication/ensure-comment.ts";
import { tempDir } from "../support/git-fixtures.ts";

const REF = { owner: "acme", repo: "api" };
const MARKER = "<!-- lisa:report run=1 -->";

let github: GitHubEmulator | undefined;
afterEach(async () => {
  await github?.stop();
  github = undefined;
});

/** The port on an emulated GitHub with one issue, and what that issue's comments say. */
async function emulated() {
  const emulator = createGitHubEmulator({ reposRoot: tempDir("ensure-repos"), webhookSecret: "s" });
  github = emulator;
  await emulator.start();
  await emulator.createRepo("acme/api", { files: { "README.md": "# API\n" } });
  const issue = await emulator.createIssue("acme/api", { title: "Add a health check", body: "", user: "ann" });
  const octokit = new LisaOctokit({
    baseUrl: emulator.url,
    auth: { token: emulator.createInstallationToken() },
    retry: { enabled: false },
    throttle: { enabled: false },
  });
  const gh = createGitHubPort(octokit as never, async () => "token");
  const bodies = () => emulator.comments("acme/api", issue.number).map((c) => c.body);
  return { gh, issue: issue.number, bodies };
}

describe("ensureComment", () => {
  it("creates the comment with its marker, then edits that one however often it is called", async () => {
    const { gh, issue, bodies } = await emulated();
    const id = await ensureComment(gh, REF, issue, MARKER, "Accepted after 1 pass.");
    // A stop before the id was recorded: the next call finds the comment by its marker.
    expect(await ensureComment(gh, REF, issue, MARKER, "Accepted after 2 passes.")).toBe(id);
    expect(await ensureComment(gh, REF, issue, MARKER, "Merged.", id)).toBe(id);
    expect(bodies()).toEqual([`${MARKER}\nMerged.`]);
  });

  it("writes a comment again that someone deleted after its id was recorded", async () => {
    const { gh, issue, bodies } = await emulated();
    const gone = 987_654;
    const id = await ensureComment(gh, REF, issue, MARKER, "Accepted after 1 pass.", gone);
    expect(id).not.toBe(gone);
    expect(bodies()).toEqual([`${MARKER}\nAccepted after 1 pass.`]);
  });
});

describe("commentOnce", () => {
  it("posts once, and leaves the comment as it is when called again", async () => {
    const { gh, issue, bodies } = await emulated();
    expect(await commentOnce(gh, REF, issue, MARKER, "Lisa did not merge acme/api#5.")).toBe(true);
    expect(await commentOnce(gh, REF, issue, MARKER, "Something else.")).toBe(false);
    expect(bodies()).toEqual([`${MARKER}\nLisa did not merge acme/api#5.`]);
  });
});
