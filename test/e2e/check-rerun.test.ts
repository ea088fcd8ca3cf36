import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { CONFIG_PATH } from "../../src/config/parse-config.ts";

// "Re-run" pressed on Lisa's check run (issue 37): GitHub sends `check_run.rerequested` to Lisa's
// App; Lisa runs the gates again at that head when it is still the pull request's head and the run
// waits at its gate, and otherwise says on the check run why she does not.

const change = (file: string): FakeInvocation => ({
  write: { [file]: "ok\n" },
  manifest: { title: "Add a health endpoint", what: "Adds it." },
  result: "Done.",
});

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** acme/api with a gate, ann a writer, and one run of hers at its review gate; its Lisa check run. */
async function atReview() {
  const agent = createFakeClaude([change("health.ts")]);
  env = await startEmulatedLisa({ claudeBinary: agent.binary });
  const { github } = env;
  await github.createRepo("acme/api", {
    files: { "README.md": "# API\n" },
    config: "label: lisa\ngates:\n  - test -f health.ts\n",
  });
  github.addCollaborator("acme/api", "ann", "write");
  const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
  await github.labelIssue("acme/api", issue.number, "lisa", "ann");
  await env.settle();
  expect((await env.lisa.store.runs.latestFor("acme", "api", issue.number))?.state).toBe("review");
  const [check] = github.checkRuns("acme/api");
  const [pull] = github.pulls("acme/api");
  if (!check || !pull) throw new Error("no check run or pull request");
  return { env, github, issue, check, pull };
}

describe("Re-run on Lisa's check run", () => {
  it("runs the gates again at the head, with the config on the default branch now, in a new check run", async () => {
    const { env, github, check, pull } = await atReview();
    // A gate added since the pass: only a real second run of the gates can fail it.
    await github.pushCommit("acme/api", "main", {
      files: { [CONFIG_PATH]: "label: lisa\ngates:\n  - test -f health.ts\n  - test -f missing.ts\n" },
      message: "Another gate",
      user: "ann",
    });
    await env.settle();

    await github.rerequestCheckRun("acme/api", check.id, "ann");
    await env.settle();

    const runs = github.checkRuns("acme/api").filter((c) => c.name === "Lisa");
    expect(runs).toHaveLength(2);
    const rerun = runs.find((c) => c.id !== check.id);
    expect(rerun).toMatchObject({ head_sha: pull.head.sha, status: "completed", conclusion: "failure" });
    expect(rerun?.output.summary).toContain("@ann asked");
    expect(rerun?.output.summary).toContain("✅ `test -f health.ts`");
    expect(rerun?.output.summary).toContain("❌ `test -f missing.ts`");
    // The check run pressed keeps what it said.
    expect(runs.find((c) => c.id === check.id)).toMatchObject({ conclusion: "success", output: check.output });
  });

  it("says on the check run that its head is no longer the pull request's head", async () => {
    const { env, github, check, pull } = await atReview();
    await github.pushCommit("acme/api", pull.head.ref, { files: { "more.ts": "more\n" }, message: "More", user: "ann" });
    await env.settle();

    await github.rerequestCheckRun("acme/api", check.id, "ann");
    await env.settle();

    const runs = github.checkRuns("acme/api").filter((c) => c.name === "Lisa");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: check.id, status: "completed", conclusion: "success" });
    expect(runs[0]?.output.summary).toContain("no longer the pull request's head");
    expect(runs[0]?.output.summary).toContain(check.output.summary ?? "");
  });

  it("says on the check run that the run has ended", async () => {
    // Two steps: the first step's head carries a check in progress while the second is built; ann aborts.
    const plan: FakeInvocation = {
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
    const agent = createFakeClaude([plan, change("health.ts"), { write: { "page.ts": "half\n" }, hang: true }]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github } = env;
    const config = "label: lisa\nrepos:\n  - repo: acme/api\n    description: API\n  - repo: acme/web\n    description: web\n";
    await github.createRepo("acme/api", { files: { "README.md": "# API\n" }, config });
    await github.createRepo("acme/web", { files: { "README.md": "# Web\n" } });
    for (const repo of ["acme/api", "acme/web"]) github.addCollaborator(repo, "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await waitFor("the second step's agent", () => agent.hangingPids());
    await github.commentOnIssue("acme/api", issue.number, "/lisa abort", "ann");
    await env.settle();
    expect((await env.lisa.store.runs.latestFor("acme", "api", issue.number))?.state).toBe("stopped");
    const [check] = github.checkRuns("acme/api");
    if (!check) throw new Error("no check run");

    await github.rerequestCheckRun("acme/api", check.id, "ann");
    await env.settle();

    const runs = github.checkRuns("acme/api").filter((c) => c.name === "Lisa");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "completed", conclusion: "cancelled" });
    expect(runs[0]?.output.summary).toMatch(/^\*\*Lisa did not run the gates again:\*\* the run has ended \(it is stopped\)/);
  });
});
