import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { RUN_STATES } from "../../src/store/transitions.ts";
import { trackingBody } from "../support/tracking-body.ts";

// GitHub on a bad day, as the emulator plays it: 502s, 429s and secondary rate limits. Lisa's
// Octokit does not retry here (tests turn its plugins off), so every fault reaches Lisa's own
// command handling: it must try again later, and say so on the issue when GitHub never recovers.

const REPO = "acme/api";
const CONFIG_PATH = /^\/repos\/acme\/api\/contents\/\.github\/lisa\.yml$/;

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

async function setUp() {
  const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } }]);
  env = await startEmulatedLisa({ claudeBinary: agent.binary, commandRetryMs: 20, publishRetryMs: 300 });
  await env.github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
  env.github.addCollaborator(REPO, "ann", "write");
  const issue = await env.github.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
  return { agent, github: env.github, issue, env };
}

const configReads = (e: EmulatedLisa) => e.github.requests().filter((r) => r.method === "GET" && CONFIG_PATH.test(r.path));

describe("GitHub failing while Lisa handles a command", () => {
  it("tries the label again after 502s and a secondary rate limit, and opens the pull request once GitHub answers", async () => {
    const { github, issue, env: e } = await setUp();
    github.injectFault({ method: "GET", path: CONFIG_PATH, kind: "server_error", times: 2 });
    github.injectFault({ method: "GET", path: CONFIG_PATH, kind: "secondary_rate_limit" });
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await e.settle();

    expect(configReads(e).map((r) => r.status)).toEqual([502, 502, 403, 200]);
    expect(github.pulls(REPO)).toHaveLength(1);
    expect(github.comments(REPO, issue.number).some((c) => c.body.includes("could not start"))).toBe(false);
  });

  it("starts the run while a slow GitHub still holds the 👀, which lands all the same", async () => {
    const { agent, github, issue, env: e } = await setUp();
    // Slow enough that a loaded machine still starts the agent first (it took over 3 s on a busy one).
    github.injectFault({ method: "POST", path: /\/reactions$/, kind: "slow", delayMs: 20_000 });
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await waitFor("the agent to start", () => agent.calls().length > 0, 19_000);
    // The emulator logs a request once it has answered it.
    expect(github.requests().some((r) => r.path.endsWith("/reactions"))).toBe(false);
    await e.settle();
    expect(
      github
        .requests()
        .filter((r) => r.path.endsWith("/reactions"))
        .map((r) => r.status),
    ).toEqual([201]);
    expect(github.pulls(REPO)).toHaveLength(1);
  });

  it("says so on the issue when GitHub keeps failing, and starts nothing", async () => {
    const { agent, github, issue, env: e } = await setUp();
    github.injectFault({ method: "GET", path: CONFIG_PATH, kind: "server_error", times: 100 });
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await e.settle();

    expect(configReads(e)).toHaveLength(5);
    const said = github.comments(REPO, issue.number).map((c) => c.body);
    expect(said).toEqual([
      expect.stringContaining(
        "Lisa could not start on this issue: GitHub kept failing (502 Server Error), 5 times. Nothing was started; remove the `lisa` label and add it again to try once more.",
      ),
    ]);
    expect(agent.calls()).toEqual([]);
    expect(await e.lisa.store.runs.inState(...RUN_STATES)).toEqual([]);
  });

  it("answers a command whose permission check GitHub keeps rate-limiting, instead of leaving only 👀", async () => {
    const { github, issue, env: e } = await setUp();
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await e.settle();
    github.injectFault({ method: "GET", path: /\/collaborators\/ann\/permission$/, kind: "rate_limited", times: 100 });
    await github.commentOnIssue(REPO, issue.number, "/lisa status", "ann");
    await e.settle();

    const last = github.comments(REPO, issue.number).at(-1)?.body ?? "";
    expect(last).toContain(
      "@ann, Lisa could not act on `/lisa status`: GitHub kept failing (429 API rate limit exceeded), 5 times. Nothing was changed; comment it again to try once more.",
    );
  });
});

describe("GitHub failing while a run works", () => {
  const pullOpens = (e: EmulatedLisa) =>
    e.github
      .requests()
      .filter((r) => r.method === "POST" && /\/pulls$/.test(r.path))
      .map((r) => r.status);

  it("rides out 502s at opening the pull request: the run goes on from the store, without /lisa retry", async () => {
    const { agent, github, issue, env: e } = await setUp();
    github.injectFault({ method: "POST", path: /\/pulls$/, kind: "server_error", times: 2 });
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await e.settle();

    expect(pullOpens(e)).toEqual([502, 502, 201]);
    expect(await e.lisa.store.runs.inState("review")).toHaveLength(1);
    expect(github.pulls(REPO)).toHaveLength(1);
    // The agent's work was pushed once and kept: no second session for GitHub's failure.
    expect(agent.calls()).toHaveLength(1);
    expect(trackingBody(github, REPO, issue.number)).not.toContain("failed");
  });

  it("fails the run after its tries, saying GitHub kept failing; /lisa retry goes on from the step", async () => {
    const { agent, github, issue, env: e } = await setUp();
    github.injectFault({ method: "POST", path: /\/pulls$/, kind: "server_error", times: 100 });
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await e.settle();

    expect(pullOpens(e)).toEqual([502, 502, 502, 502, 502]);
    expect(await e.lisa.store.runs.inState("failed")).toHaveLength(1);
    expect(trackingBody(github, REPO, issue.number)).toContain(
      "GitHub kept failing while the run worked (502 Server Error), 5 times over several minutes.\n\nComment `/lisa retry` to resume at the step that failed",
    );

    github.clearFaults();
    await github.commentOnIssue(REPO, issue.number, "/lisa retry", "ann");
    await e.settle();
    expect(await e.lisa.store.runs.inState("review")).toHaveLength(1);
    expect(github.pulls(REPO)).toHaveLength(1);
    expect(agent.calls()).toHaveLength(1);
  });
});

describe("GitHub refusing the tracking comment's last edit", () => {
  it("writes it again once GitHub takes it, so the issue does not say Working over a run in review", async () => {
    const { github, issue, env: e } = await setUp();
    // Every edit of a comment is refused, the run's last one included, for as long as the fault lasts.
    github.injectFault({ method: "PATCH", path: /\/issues\/comments\/\d+$/, kind: "secondary_rate_limit", times: 1_000 });
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await e.settle();
    const tracking = () => trackingBody(github, REPO, issue.number);
    expect(await e.lisa.store.runs.inState("review")).toHaveLength(1);
    expect(tracking()).not.toContain("Ready for review");

    github.clearFaults();
    await waitFor("the tracking comment to show the run in review", () => tracking().includes("👀 Ready for review"), 10_000);
  });
});
