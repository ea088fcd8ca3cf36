import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";

// The "Lisa" check run in the merge box (issue 11): on each head Lisa pushes, in progress while
// the plan's later steps are built, success at the review gate, cancelled when a human stops the run.

const change = (file: string): FakeInvocation => ({
  write: { [file]: "ok\n" },
  manifest: { title: "Add a health endpoint", what: "Adds it." },
  result: "Done.",
});

/** The planner's answer: acme/api first, then acme/web. */
const twoSteps: FakeInvocation = {
  write: {
    ".lisa-plan.json": JSON.stringify({
      rationale: "API first.",
      steps: [
        { repo: "acme/api", order: 1, scope: "The endpoint." },
        { repo: "acme/web", order: 2, scope: "The page." },
      ],
    }),
  },
  result: "Planned.",
};

/** acme/api, whose config lists both repositories (plus `more`), and acme/web; ann writes to both. */
async function twoRepos(github: EmulatedLisa["github"], more = "") {
  const config = `label: lisa\nrepos:\n  - repo: acme/api\n    description: API\n  - repo: acme/web\n    description: web\n${more}`;
  await github.createRepo("acme/api", { files: { "README.md": "# API\n" }, config });
  await github.createRepo("acme/web", { files: { "README.md": "# Web\n" } });
  for (const repo of ["acme/api", "acme/web"]) github.addCollaborator(repo, "ann", "write");
}

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("the Lisa check run", () => {
  it("reports success on the head of a single-repository pass at its gate, in one write", async () => {
    const agent = createFakeClaude([change("health.ts")]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github } = env;
    await github.createRepo("acme/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("acme/api", "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    const before = github.requests().length;
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await env.settle();

    const [pull] = github.pulls("acme/api");
    const checks = github.checkRuns("acme/api");
    expect(checks).toHaveLength(1);
    const [check] = checks;
    expect(check).toMatchObject({ name: "Lisa", head_sha: pull?.head.sha, status: "completed", conclusion: "success" });
    expect(check?.output.title).toBe("Ready for review");
    expect(check?.output.summary).toContain("Gates at this head: ✅ `test -f health.ts`");
    const tracking = github.comments("acme/api", issue.number).find((c) => c.body.includes("Ready for review"));
    expect(check?.details_url).toBe(`${github.url}/acme/api/issues/${issue.number}#issuecomment-${tracking?.id}`);
    // The gate opens at once after the only step: no in-progress report first.
    const writes = github
      .requests()
      .slice(before)
      .filter((r) => r.path.includes("/check-runs") && r.method !== "GET");
    expect(writes.map((r) => `${r.method} ${r.status}`)).toEqual(["POST 201"]);
  });

  it("shows the first step's head in progress while the second is built, and cancelled when ann aborts", async () => {
    const agent = createFakeClaude([twoSteps, change("health.ts"), { write: { "page.ts": "half\n" }, hang: true }]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github } = env;
    await twoRepos(github);
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");

    await waitFor("the second step's agent", () => agent.hangingPids());
    const [pull] = github.pulls("acme/api");
    const [waiting] = github.checkRuns("acme/api");
    expect(waiting).toMatchObject({ name: "Lisa", head_sha: pull?.head.sha, status: "in_progress", conclusion: null });
    expect(waiting?.output.title).toBe("Waiting for the rest of the plan");

    await github.commentOnIssue("acme/api", issue.number, "/lisa abort", "ann");
    await env.settle();
    const [ended] = github.checkRuns("acme/api");
    expect(github.checkRuns("acme/api")).toHaveLength(1);
    expect(ended).toMatchObject({ id: waiting?.id, status: "completed", conclusion: "cancelled" });
    expect(ended?.output.summary).toContain("The run was stopped before this pass reached review.");
    expect(github.checkRuns("acme/web")).toEqual([]);
  });

  it("is skipped, and the run goes on, where the owner has not accepted `checks: write` yet", async () => {
    const agent = createFakeClaude([change("health.ts")]);
    env = await startEmulatedLisa({
      claudeBinary: agent.binary,
      permissions: { contents: "write", issues: "write", pull_requests: "write", metadata: "read" },
    });
    const { github } = env;
    await github.createRepo("acme/api", { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
    github.addCollaborator("acme/api", "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await env.settle();
    expect((await env.lisa.store.runs.latestFor("acme", "api", issue.number))?.state).toBe("review");
    expect(
      github
        .requests()
        .filter((r) => r.path.endsWith("/check-runs"))
        .map((r) => r.status),
    ).toEqual([403]);
    expect(github.checkRuns("acme/api")).toEqual([]);
  });

  it("cancels the waiting check when ann aborts a run whose second step is blocked", async () => {
    const agent = createFakeClaude([twoSteps, change("ok.txt"), change("other.txt")]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github } = env;
    await twoRepos(github, "gates:\n  - test -f ok.txt\nlimits:\n  max_iterations: 1\n");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await env.settle();
    expect((await env.lisa.store.runs.latestFor("acme", "api", issue.number))?.state).toBe("blocked");
    expect(github.checkRuns("acme/api").map((c) => c.status)).toEqual(["in_progress"]);

    await github.commentOnIssue("acme/api", issue.number, "/lisa abort", "ann");
    await env.settle();
    expect(github.checkRuns("acme/api").map((c) => [c.status, c.conclusion])).toEqual([["completed", "cancelled"]]);
  });
});
