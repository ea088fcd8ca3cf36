import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { RUN_STATES } from "../../src/store/transitions.ts";
import { trackingBody } from "../support/tracking-body.ts";

// A session a person stops (`/lisa abort`, a pull request closed mid-pass) is theirs, not a crash of
// the agent, and what the tracking comment and the abort reply offer next is only what can work.
// Lisa against the GitHub emulator, people acting through its helpers, the agent scripted.

const CONFIG = "label: lisa\ngates:\n  - test -f health.ts\n";
const TWO_REPOS = `label: lisa
repos:
  - repo: acme/api
    description: REST API
  - repo: acme/web
    description: front end
`;

const change = (file: string, text: string): FakeInvocation => ({
  write: { [file]: `${text}\n` },
  manifest: { title: "Add a health endpoint", what: `${text}.` },
  result: `${text}: done.`,
});
const hanging = (file: string): FakeInvocation => ({ write: { [file]: "half\n" }, hang: true });
const planOf = (repos: string[]): FakeInvocation => ({
  write: {
    ".lisa-plan.json": JSON.stringify({
      rationale: "API first.",
      steps: repos.map((repo, i) => ({ repo, order: i + 1, scope: `Health work in ${repo}.` })),
    }),
  },
  result: "Planned.",
});

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** acme/api (with the config) and acme/web, ann a writer on both, and an issue ann has labeled. */
async function labeled(invocations: FakeInvocation[], config = CONFIG) {
  const agent = createFakeClaude(invocations);
  env = await startEmulatedLisa({ claudeBinary: agent.binary });
  const e = env;
  await e.github.createRepo("acme/api", { files: { "README.md": "# API\n" }, config });
  await e.github.createRepo("acme/web", { files: { "README.md": "# Web\n" } });
  for (const repo of ["acme/api", "acme/web"]) e.github.addCollaborator(repo, "ann", "write");
  const issue = await e.github.createIssue("acme/api", { title: "Add a health endpoint", body: "", user: "ann" });
  await e.github.labelIssue("acme/api", issue.number, "lisa", "ann");
  return { agent, e, issue: issue.number };
}

const runOf = async (e: EmulatedLisa) => {
  const [run] = await e.lisa.store.runs.inState(...RUN_STATES);
  if (!run) throw new Error("no run");
  return run;
};
const line = (text: string, start: string) => text.split("\n").find((l) => l.startsWith(start));
const replyTo = (e: EmulatedLisa, issue: number, text: string) =>
  e.github.comments("acme/api", issue).find((c) => c.body.includes("<!-- lisa:reply") && c.body.includes(text))?.body ?? "";

describe("a session a person stops", () => {
  it("/lisa abort before any pull request: stopped by @ann, and only a redirect is offered", async () => {
    const { agent, e, issue } = await labeled([hanging("health.ts")]);
    await waitFor("the agent to start", () => agent.hangingPids());
    await e.github.commentOnIssue("acme/api", issue, "/lisa abort", "ann");
    await e.settle();

    expect((await runOf(e)).state).toBe("stopped");
    const tracking = trackingBody(e.github, "acme/api", issue);
    expect(tracking).toContain("— ⏹️ stopped");
    expect(tracking).toMatch(
      / {2}- ⏹️ Agent session 1: claude, implementing · \d+s · \$0\.00 · stopped by @ann \(`\/lisa abort`\)/,
    );
    expect(tracking).not.toContain("crashed");
    // No pull request was opened, and the aborted pass proposed nothing to continue with.
    expect(line(tracking, "**Waiting for:**")).toBe("**Waiting for:** you: `/lisa redirect <guidance>` to start pass 2");
    expect(line(tracking, "**Commands:**")).toBe("**Commands:** `/lisa redirect <guidance>` · `/lisa status` · `/lisa help`");
    expect(replyTo(e, issue, "Stopped pass 1.")).toContain("Stopped pass 1. Next: `/lisa redirect <guidance>` to start pass 2.");
    expect(
      e.github
        .comments("acme/api", issue)
        .map((c) => c.body)
        .join("\n"),
    ).not.toMatch(/closing the pull requests|\/lisa continue/);
  });

  it("/lisa abort in pass 2: the open pull request may be approved or closed; continue is not offered", async () => {
    const { agent, e, issue } = await labeled([change("health.ts", "Add GET /health"), hanging("health.ts")]);
    await e.settle();
    const [pull] = e.github.pulls("acme/api");
    const pr = `[acme/api#${pull?.number}](${e.github.url}/acme/api/pull/${pull?.number})`;
    await e.github.commentOnIssue("acme/api", pull?.number ?? 0, "/lisa redirect serve v2", "ann");
    await waitFor("pass 2's agent to start", () => agent.hangingPids());
    await e.github.commentOnIssue("acme/api", issue, "/lisa abort", "ann");
    await e.settle();

    const tracking = trackingBody(e.github, "acme/api", issue);
    expect(tracking).toMatch(/ {2}- ⏹️ Agent session 2: claude, revising · \d+s · \$0\.00 · stopped by @ann \(`\/lisa abort`\)/);
    expect(tracking).not.toContain("crashed");
    expect(line(tracking, "**Waiting for:**")).toBe(
      `**Waiting for:** you: \`/lisa redirect <guidance>\` to start pass 3; approve ${pr} to accept it as it stands, or close it to end the run`,
    );
    expect(replyTo(e, issue, "Stopped pass 2.")).toContain(
      `Stopped pass 2. Next: \`/lisa redirect <guidance>\` to start pass 3; approve ${pr} to accept it as it stands, or close it to end the run.`,
    );
  });

  it("a pull request closed mid-pass: its session is stopped by the closer, the step dropped, the other repository delivered", async () => {
    const { agent, e, issue } = await labeled(
      [
        planOf(["acme/api", "acme/web"]),
        change("health.ts", "API"),
        change("Health.tsx", "Web"),
        planOf(["acme/api", "acme/web"]),
        hanging("health.ts"),
        change("Health.tsx", "Web v2"),
      ],
      TWO_REPOS,
    );
    await e.settle();
    const [api] = e.github.pulls("acme/api");
    await e.github.commentOnIssue("acme/api", issue, "/lisa redirect v2 everywhere", "ann");
    await waitFor("pass 2's agent on acme/api to start", () => agent.hangingPids());
    await e.github.closePull("acme/api", api?.number ?? 0, "ann");
    await e.settle();

    // The run goes on without acme/api: it did not fail.
    expect((await runOf(e)).state).toBe("review");
    expect(agent.calls()).toHaveLength(6);
    expect(await e.github.readFile("acme/web", "Health.tsx", e.github.pulls("acme/web")[0]?.head.ref)).toBe("Web v2\n");
    const tracking = trackingBody(e.github, "acme/api", issue);
    expect(tracking).toMatch(/`acme\/api` on `[^`]+` — dropped/);
    expect(tracking).toMatch(
      / {2}- ⏹️ Agent session 2: claude, revising · \d+s · \$0\.00 · stopped by @ann \(closed the pull request\)/,
    );
    expect(tracking).not.toContain("crashed");
    expect(tracking).not.toContain("What went wrong");
  });
});
