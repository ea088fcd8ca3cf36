import { readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { trackingBody } from "../support/tracking-body.ts";

const CONFIG = `label: lisa
repos:
  - repo: acme/api
    description: REST API
  - repo: acme/web
    description: React front end
  - repo: acme/docs
    description: User documentation
`;

const plan = (steps: { repo: string; order: number }[]) => ({
  write: {
    ".lisa-plan.json": JSON.stringify({
      rationale: "API first, then its client, then the docs.",
      steps: steps.map((s) => ({ ...s, scope: `Health endpoint work in ${s.repo}.` })),
    }),
  },
  result: "Planned.",
});
const VALID_PLAN = plan([
  { repo: "acme/web", order: 2 },
  { repo: "acme/api", order: 1 },
  { repo: "acme/docs", order: 3 },
]);
const change = (file: string, title: string): FakeInvocation => ({
  write: { [file]: `${title}\n` },
  manifest: { title, what: `${title}.` },
  result: `${title} done.`,
});

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

async function setUp(invocations: FakeInvocation[], writers: readonly string[] = ["acme/api", "acme/web", "acme/docs"]) {
  const agent = createFakeClaude(invocations);
  env = await startEmulatedLisa({ claudeBinary: agent.binary });
  const { github } = env;
  await github.createRepo("acme/api", { files: { "README.md": "# API\n" }, config: CONFIG });
  await github.createRepo("acme/web", { files: { "README.md": "# Web\n" } });
  await github.createRepo("acme/docs", { files: { "README.md": "# Docs\n" } });
  for (const repo of writers) github.addCollaborator(repo, "alice", "write");
  const issue = await github.createIssue("acme/api", {
    title: "Add a health endpoint",
    body: "Expose /health and show it.",
    user: "alice",
  });
  await github.labelIssue("acme/api", issue.number, "lisa", "alice");
  await env.settle();
  return { agent, github, issue, env };
}

const tracking = (e: EmulatedLisa, issue: number) => trackingBody(e.github, "acme/api", issue);

describe("a multi-repository issue", () => {
  it("gives issue acme/api#1 and issue acme/web#1 their own branches and pull requests in acme/web", async () => {
    const agent = createFakeClaude([
      plan([{ repo: "acme/web", order: 1 }]),
      change("Health.tsx", "Show API health"),
      change("Banner.tsx", "Add a banner"),
    ]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github } = env;
    await github.createRepo("acme/api", { files: { "README.md": "# API\n" }, config: CONFIG });
    await github.createRepo("acme/web", { files: { "README.md": "# Web\n" }, config: "label: lisa\n" });
    await github.createRepo("acme/docs", { files: { "README.md": "# Docs\n" } });
    for (const repo of ["acme/api", "acme/web", "acme/docs"]) github.addCollaborator(repo, "alice", "write");
    const web = await github.createIssue("acme/web", { title: "Add a health endpoint", body: "", user: "alice" });
    const api = await github.createIssue("acme/api", { title: "Add a health endpoint", body: "", user: "alice" });
    expect([api.number, web.number]).toEqual([1, 1]);
    await github.labelIssue("acme/api", api.number, "lisa", "alice");
    await env.settle();
    await github.labelIssue("acme/web", web.number, "lisa", "alice");
    await env.settle();

    expect(agent.calls()).toHaveLength(3);
    const pulls = github.pulls("acme/web");
    expect(pulls.map((p) => [p.head.ref, p.title])).toEqual([
      ["lisa/api-1-add-a-health-endpoint", "Show API health"],
      ["lisa/1-add-a-health-endpoint", "Add a banner"],
    ]);
  });

  it("leaves out of the plan a repository the requester cannot write to, and says so", async () => {
    const { agent, github, issue } = await setUp(
      [plan([{ repo: "acme/api", order: 1 }]), change("health.ts", "Add GET /health")],
      ["acme/api", "acme/web"],
    );
    const prompt = agent.calls()[0]?.prompt ?? "";
    expect(prompt).toContain("left out because @alice cannot write to them: `acme/docs`");
    expect(prompt).not.toContain("`acme/docs` (checked out at");
    expect(github.pulls("acme/docs")).toEqual([]);
    expect(github.pulls("acme/api")).toHaveLength(1);
    expect(tracking(env as EmulatedLisa, issue.number)).toContain("Ready for review");
  });

  it("is planned, then delivered in order as linked pull requests", async () => {
    const { agent, github, issue } = await setUp([
      VALID_PLAN,
      change("health.ts", "Add GET /health"),
      change("Health.tsx", "Show API health"),
      change("health.md", "Document /health"),
    ]);

    const calls = agent.calls();
    expect(calls).toHaveLength(4);
    expect(calls[0]?.prompt).toContain("Add a health endpoint");
    expect(calls[0]?.prompt).toContain("`acme/api` (checked out at `acme/api/`");
    expect(calls[2]?.prompt).toContain("This is step 2 of 3, in `acme/web`");
    expect(calls[2]?.prompt).toMatch(/Step 1, `acme\/api`: branch `lisa\/\d+-add-a-health-endpoint`, pull request http/);

    const [api] = github.pulls("acme/api");
    const [web] = github.pulls("acme/web");
    const [docs] = github.pulls("acme/docs");
    expect([api?.title, web?.title, docs?.title]).toEqual(["Add GET /health", "Show API health", "Document /health"]);
    // Each is part of the issue: merging one first must not close it (Lisa closes it after the last).
    expect(api?.body).toMatch(new RegExp(`Part of #${issue.number}\n<!-- lisa:body:end -->$`));
    expect(web?.body).toMatch(new RegExp(`Part of acme/api#${issue.number}\n<!-- lisa:body:end -->$`));
    // The first pull request was updated to link the ones opened after it.
    expect(api?.body).toContain("This is step 1 of 3 of the plan");
    expect(api?.body).toContain(`Step 2, \`acme/web\`: ${web?.html_url}`);
    expect(api?.body).toContain(`Step 3, \`acme/docs\`: ${docs?.html_url}`);
    expect(await github.readFile("acme/web", "Health.tsx", web?.head.ref)).toBe("Show API health\n");
    const webRemote = github.gitDir("acme/web");
    expect(gitIn(webRemote, "log", "-1", "--format=%B", web?.head.ref ?? "")).toContain(
      `Made by Lisa for acme/api#${issue.number}, pass 1.`,
    );

    const comment = tracking(env as EmulatedLisa, issue.number);
    expect(comment).toContain("Ready for review");
    expect(comment).toContain("- [x] Plan");
    expect(comment).toMatch(/- \[x\] Step 1: `acme\/api`/);
    // Nothing is left in the data directory's worktrees once every step is delivered.
    expect(readdirSync(path.join((env as EmulatedLisa).dataDir, "worktrees"))).toEqual([]);

    // The issue repository's PR merged first leaves the issue open while its siblings are; the last
    // merge closes it, by Lisa.
    const e = env as EmulatedLisa;
    await github.mergePull("acme/api", api?.number ?? 0, { user: "alice" });
    await e.settle();
    expect(github.issue("acme/api", issue.number).state).toBe("open");
    await github.mergePull("acme/web", web?.number ?? 0, { user: "alice" });
    await github.mergePull("acme/docs", docs?.number ?? 0, { user: "alice" });
    await e.settle();
    expect(github.issue("acme/api", issue.number)).toMatchObject({ state: "closed", state_reason: "completed" });
    expect(tracking(e, issue.number)).toContain("merged");
  });

  it("asks the planner again, listing what was wrong, when its plan is invalid", async () => {
    const invalid = plan([
      { repo: "acme/unknown", order: 1 },
      { repo: "acme/api", order: 2 },
      { repo: "acme/api", order: 3 },
    ]);
    const { agent, github } = await setUp([
      invalid,
      plan([{ repo: "acme/api", order: 1 }]),
      change("health.ts", "Add GET /health"),
    ]);

    const calls = agent.calls();
    expect(calls).toHaveLength(3);
    expect(calls[1]?.prompt).toContain("[RETRY - YOUR PLAN WAS REJECTED]");
    expect(calls[1]?.prompt).toContain('steps[0].repo "acme/unknown" is not one of the configured repositories');
    expect(calls[1]?.prompt).toContain('steps[2].repo "acme/api" appears more than once');
    // A valid one-step plan runs like a single-repository run.
    expect(github.pulls("acme/api")).toHaveLength(1);
    expect(github.pulls("acme/web")).toHaveLength(0);
  });

  it("fails with the problems listed after three invalid plans, and does nothing else", async () => {
    const invalid = plan([{ repo: "acme/elsewhere", order: 1 }]);
    const { agent, github, issue } = await setUp([invalid, invalid, invalid]);

    const calls = agent.calls();
    expect(calls).toHaveLength(3);
    expect(calls[2]?.prompt).toContain("[FINAL ATTEMPT]");
    expect(["acme/api", "acme/web", "acme/docs"].flatMap((repo) => github.pulls(repo))).toEqual([]);
    const comment = tracking(env as EmulatedLisa, issue.number);
    expect(comment).toContain("Planning failed: The planner did not write a valid plan in 3 attempts.");
    // Markdown-escaped as steps\[0] in the comment, which GitHub shows as steps[0].
    expect(comment).toContain('.repo "acme/elsewhere" is not one of the configured repositories');
    expect(github.labels("acme/api", issue.number)).toContain("lisa:failed");
  });

  it("stops at a failed step, and /lisa retry finishes the rest without redoing the first", async () => {
    const { agent, github, issue } = await setUp([
      VALID_PLAN,
      change("health.ts", "Add GET /health"),
      { crash: true },
      change("Health.tsx", "Show API health"),
      change("health.md", "Document /health"),
    ]);
    expect(agent.calls()).toHaveLength(3);
    expect(github.pulls("acme/web")).toHaveLength(0);
    expect(github.pulls("acme/docs")).toHaveLength(0);
    expect(tracking(env as EmulatedLisa, issue.number)).toContain("Step 2 (acme/web) failed: The agent session failed (crashed)");
    expect(github.labels("acme/api", issue.number)).toContain("lisa:failed");
    const apiHead = github.pulls("acme/api")[0]?.head.sha;

    await github.commentOnIssue("acme/api", issue.number, "/lisa retry", "alice");
    await (env as EmulatedLisa).settle();

    const calls = agent.calls();
    expect(calls).toHaveLength(5);
    expect(calls[3]?.prompt).toContain("This is step 2 of 3, in `acme/web`");
    expect(github.pulls("acme/api")).toHaveLength(1);
    expect(github.pulls("acme/api")[0]?.head.sha).toBe(apiHead);
    expect(github.pulls("acme/web")).toHaveLength(1);
    expect(github.pulls("acme/docs")).toHaveLength(1);
    expect(github.labels("acme/api", issue.number)).toContain("lisa:review");
    expect(github.reactions("acme/api", issue.number).map((r) => r.content)).toContain("rocket");
  });

  it("ignores /lisa retry from someone without write access, politely", async () => {
    const { agent, github, issue } = await setUp([VALID_PLAN, { crash: true }]);
    github.addCollaborator("acme/api", "bob", "triage");

    await github.commentOnIssue("acme/api", issue.number, "/lisa retry", "bob");
    await (env as EmulatedLisa).settle();

    expect(agent.calls()).toHaveLength(2);
    expect(
      github
        .comments("acme/api", issue.number)
        .map((c) => c.body)
        .join("\n"),
    ).toContain("@bob, only people with write access to this repository can steer Lisa.");
  });
});
