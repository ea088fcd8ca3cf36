import { afterEach, describe, expect, it } from "vitest";
import type { EmulatedLisa } from "../../dev/emulated-lisa.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { CONFIG, change, passOne, REPO, runOf } from "../support/pass-one.ts";
import { trackingBody } from "../support/tracking-body.ts";

// GitHub refuses a push from an App without the `workflows` permission (Lisa's does not ask for it)
// when its new commits change `.github/workflows/`, and the emulator does too. An agent that edits a
// workflow blocks its step with a reason a person can act on; nothing under workflows is pushed, the
// pull request keeps its head, and `/lisa fix` with a session that undoes the change delivers.

const CI = ".github/workflows/ci.yml";
const CI_TEXT = "name: CI\non: push\njobs: {}\n";

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("an agent that changes a workflow", () => {
  it("blocks the step instead of failing the run, pushes nothing under workflows, and /lisa fix that undoes it delivers", async () => {
    const { agent, github, issue, pull } = await passOne(
      [
        change("health.ts", "Add GET /health"),
        {
          ...change("health.ts", "Add GET /v2/health"),
          write: { "health.ts": "v2\n", [CI]: "name: CI\non: [push, pull_request]\n" },
        },
        // It changes the workflow again and commits, then undoes that: its commits touch the workflow, their sum does not.
        {
          ...change("health.ts", "Add GET /v2/health"),
          write: { "health.ts": "v3\n" },
          run: [
            `printf 'on: schedule\\n' >> ${CI} && git commit -qam 'Run CI nightly'`,
            `git checkout HEAD~1 -- ${CI} && git commit -qm 'Leave CI alone'`,
          ],
        },
      ],
      CONFIG,
      (started) => {
        env = started;
      },
      // The workflow runs: its check passes on every push.
      { repo: { files: { "README.md": "# API\n", [CI]: CI_TEXT }, ci: [{ name: "tests" }] } },
    );
    const e = env as EmulatedLisa;
    const bare = github.gitDir(REPO);
    /** Commits of any branch that change a workflow: only the repository's first. */
    const workflowCommits = () => gitIn(bare, "rev-list", "--all", "--", ".github/workflows/").trim().split("\n");
    const initial = workflowCommits();
    expect(initial).toHaveLength(1);
    const headBefore = pull.head.sha;

    await github.commentOnIssue(REPO, pull.number, "/lisa redirect serve it under /v2", "ann");
    await e.settle();

    const run = await runOf(e);
    expect(run.state).toBe("blocked");
    const step = (await e.lisa.store.steps.of(run.id)).find((s) => s.position === 1);
    expect(step?.state).toBe("blocked");
    const tracking = trackingBody(github, REPO, issue.number);
    expect(tracking).toContain(
      "The agent changed `.github/workflows/ci.yml`, and Lisa's GitHub App may not push workflow changes. `/lisa fix <notes>` has the agent undo them, or push the workflow change yourself.",
    );
    expect(tracking).not.toMatch(/remote rejected|refusing to allow/);
    expect(github.pulls(REPO).find((p) => p.number === pull.number)?.head.sha).toBe(headBefore);
    expect(workflowCommits()).toEqual(initial);
    // The rest of the attempt is on Lisa's WIP branch, without the workflow change.
    const wip = `${pull.head.ref}--wip`;
    expect(await github.readFile(REPO, "health.ts", wip)).toBe("v2\n");
    expect(await github.readFile(REPO, CI, wip)).toBe(CI_TEXT);

    await github.commentOnIssue(REPO, issue.number, "/lisa fix leave the CI workflow as it is", "ann");
    await e.settle();

    expect(agent.calls()).toHaveLength(3);
    expect(agent.calls()[2]?.prompt).toContain("Leave everything under `.github/workflows/` as the branch had it");
    expect((await runOf(e)).state).toBe("review");
    const [after] = github.pulls(REPO);
    expect(after?.head.sha).not.toBe(headBefore);
    expect(await github.readFile(REPO, "health.ts", after?.head.ref)).toBe("v3\n");
    expect(await github.readFile(REPO, CI, after?.head.ref)).toBe(CI_TEXT);
    expect(workflowCommits()).toEqual(initial);
    // The blocked attempt, then the fix session's two commits as one: neither changes the workflow.
    const added = gitIn(bare, "log", "--format=%s", `${headBefore}..${after?.head.sha}`).trim().split("\n");
    expect(added).toHaveLength(2);
  });
});
