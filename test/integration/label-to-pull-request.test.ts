import { readFileSync } from "node:fs";
import path from "node:path";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFakeClaude } from "../support/fake-agent.ts";
import { fakeGitHub, type Route } from "../support/fake-github.ts";
import { createRemote, gitIn, tempDir } from "../support/git-fixtures.ts";
import { createHarness, type Harness, labeledPayload } from "../support/lisa-harness.ts";

const OWNER = "Codertocat";
const REPO = "Hello-World";
const TOKEN = `ghs_${"a1B2c3D4".repeat(5)}`;
const ALL_ROUTES: Route[] = ["token", "config", "permission", "reactions", "comments", "labels", "pulls"];
const BRANCH = "lisa/1-spelling-error-in-the-readme-file";

let remoteRoot: string;
let harness: Harness | undefined;

beforeEach(() => {
  nock.disableNetConnect();
  remoteRoot = tempDir("remote");
  createRemote(remoteRoot, `${OWNER}/${REPO}`, "master", { "README.md": "# Hello Wrold\n" });
});

afterEach(async () => {
  await harness?.lisa.stop();
  harness = undefined;
  nock.cleanAll();
  nock.enableNetConnect();
});

async function deliver(h: Harness, id = "delivery-1") {
  await h.probot.receive({ id, name: "issues", payload: await labeledPayload() });
  await h.lisa.idle();
}

const remoteFile = (branch: string, file: string) =>
  gitIn(path.join(remoteRoot, `${OWNER}/${REPO}.git`), "show", `${branch}:${file}`);

describe("labeling an issue", () => {
  it("runs the agent, pushes its change and opens a pull request with a clean body", async () => {
    const agent = createFakeClaude([
      {
        write: { "README.md": "# Hello World\n" },
        manifest: {
          title: "Fix the spelling of World in the README",
          what: "Corrects <b>Wrold</b> to World in the README heading.",
          key_changes: ["`README.md` — heading spelled correctly"],
          testing: `Checked the heading; token ${TOKEN} must not leak.`,
        },
        result: "Fixed the typo.",
        cost: 0.42,
      },
    ]);
    const github = fakeGitHub({
      owner: OWNER,
      repo: REPO,
      installationId: 2,
      token: TOKEN,
      config: "label: bug\ngates:\n  - grep -q 'Hello World' README.md\n",
      role: "maintain",
      routes: ALL_ROUTES,
    });
    harness = createHarness({ remoteRoot, claudeBinary: agent.binary });
    await harness.lisa.start();

    await deliver(harness);

    expect(harness.lisa.store.runsIn("review")).toHaveLength(1);
    const [pull, ...otherPulls] = github.state.pulls;
    expect(otherPulls).toEqual([]);
    expect(pull).toMatchObject({ head: BRANCH, base: "master", title: "Fix the spelling of World in the README" });
    expect(pull?.body).toMatch(/^### What\n\nCorrects Wrold to World in the README heading\.\n\n### Why\n/);
    expect(pull?.body).toContain("### Key changes\n\n- `README.md` — heading spelled correctly");
    expect(pull?.body).toContain("- `grep -q 'Hello World' README.md` passed (run by Lisa)");
    expect(pull?.body).toMatch(/Closes #1$/);
    expect(pull?.body).not.toContain(TOKEN);
    expect(pull?.body).not.toContain("<b>");

    expect(remoteFile(BRANCH, "README.md")).toBe("# Hello World\n");
    expect(() => remoteFile(BRANCH, ".lisa-manifest.json")).toThrow();

    const tracking = github.state.comments.filter((c) => c.body.includes("lisa:tracking"));
    expect(tracking).toHaveLength(1);
    expect(tracking[0]?.body).toContain("Ready for review");
    expect(tracking[0]?.body).toContain("agent cost $0.42");
    expect(tracking[0]?.body.trimEnd()).toMatch(
      /Waiting for:\*\* your review of https:\/\/github\.com\/Codertocat\/Hello-World\/pull\/10$/,
    );
    expect(github.state.reactions).toEqual(["eyes"]);
    expect([...github.state.labels]).toEqual(["lisa:review"]);
    expect(github.scope.pendingMocks()).toEqual([]);

    const [call] = agent.calls();
    expect(call?.args).toEqual(["-p", "--output-format", "json", "--dangerously-skip-permissions"]);
    expect(call?.prompt).toContain("Spelling error in the README file");
    expect(readFileSync(path.join(harness.dataDir, "lisa.db")).length).toBeGreaterThan(0);
  });
});
