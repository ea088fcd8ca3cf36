import { describe, expect, it } from "vitest";
import { AUTHOR, BROKEN, MULTI, READER, REPO, useCommandWorld, WRITER } from "../support/command-world.ts";

// The label that asks Lisa to work on an issue (start-run.ts): a queued run with its first step and
// a 👀, or a reply saying why not. The `issues.labeled` payload the emulator sends, made a command by
// Lisa's webhook handler, handled by startRun against a store in memory and the emulator in this process.

const world = useCommandWorld();

describe("the label", () => {
  it("added by a writer queues a run on the issue, its one step on the issue's repository, with a 👀 and no reply", async () => {
    const w = await world.begin();
    const issue = await w.issue();
    const labeled = await w.label(issue, "lisa");

    const outcome = await w.start(labeled);

    const run = await w.store.runs.latestFor("acme", "api", issue);
    expect(outcome).toBe(`queued run ${run?.id}`);
    expect(run).toMatchObject({
      state: "queued",
      current_pass: 1,
      requested_by: WRITER,
      issue_title: "Add a health endpoint",
      installation_id: w.github.installationId,
    });
    expect(await w.store.steps.of(run?.id ?? 0)).toMatchObject([
      {
        position: 1,
        owner: "acme",
        repo: "api",
        branch: `lisa/${issue}-add-a-health-endpoint`,
        base_branch: "main",
        state: "pending",
      },
    ]);
    expect(await w.store.passes.of(run?.id ?? 0)).toMatchObject([{ number: 1, trigger: "initial", requested_by: WRITER }]);
    expect(w.github.reactions(REPO, issue)).toEqual([{ content: "eyes", user: "lisa[bot]" }]);
    expect(w.replies(issue)).toEqual([]);
  });

  it("on a repository whose config lists several repositories starts with a planning step", async () => {
    const w = await world.begin();
    const issue = await w.issue(MULTI);

    await w.start(await w.label(issue, "lisa", WRITER, MULTI));

    const run = await w.store.runs.latestFor("acme", "both", issue);
    expect(run?.state).toBe("queued");
    expect(await w.store.steps.of(run?.id ?? 0)).toMatchObject([
      { position: 0, owner: "acme", repo: "both", base_branch: null, phase: "planning", state: "pending" },
    ]);
  });

  it("of another name is none of Lisa's business: no run, no reaction, no reply", async () => {
    const w = await world.begin();
    const issue = await w.issue();

    expect(await w.start(await w.label(issue, "bug"))).toBe("ignored: another label");

    expect(await w.store.runs.latestFor("acme", "api", issue)).toBeUndefined();
    expect(w.github.reactions(REPO, issue)).toEqual([]);
    expect(w.github.comments(REPO, issue)).toEqual([]);
  });

  it("added by a reader is refused with a reply, and starts nothing", async () => {
    const w = await world.begin();
    const issue = await w.issue();

    expect(await w.start(await w.label(issue, "lisa", READER))).toBe(`denied: ${READER} has role read`);

    expect(await w.store.runs.latestFor("acme", "api", issue)).toBeUndefined();
    expect(w.github.reactions(REPO, issue)).toEqual([]);
    expect(w.replies(issue)).toEqual([
      `@${READER}, only people with write access to this repository can ask Lisa to work on an issue. A maintainer can add the \`lisa\` label instead.`,
    ]);
  });

  it("on a repository whose config is invalid says why, and starts nothing", async () => {
    const w = await world.begin();
    const issue = await w.issue(BROKEN);

    expect(await w.start(await w.label(issue, "lisa", WRITER, BROKEN))).toBe("config invalid");

    expect(await w.store.runs.latestFor("acme", "broken", issue)).toBeUndefined();
    const [reply] = w.replies(issue, BROKEN);
    expect(reply).toMatch(/^Lisa cannot start: `\.github\/lisa\.yml` is not valid:/);
    expect(reply).toContain("max_passes");
    expect(reply).toMatch(/Fix the file on the default branch and label the issue again\.$/);
  });

  it("of another name on a repository whose config is invalid says nothing", async () => {
    const w = await world.begin();
    const issue = await w.issue(BROKEN);

    expect(await w.start(await w.label(issue, "bug", WRITER, BROKEN))).toMatch(/^ignored: another label \(and /);

    expect(w.github.comments(BROKEN, issue)).toEqual([]);
  });

  it("on an issue whose run is still open says so, and starts no second run", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("review");

    expect(await w.start(await w.label(issue, "lisa"))).toBe("ignored: the issue already has an open run");

    expect((await w.store.runs.latestFor("acme", "api", issue))?.id).toBe(runId);
    expect(w.replies(issue)).toEqual([
      `Run ${runId} for this issue is still open (review, pass 1). Steer it with \`/lisa redirect <what to change>\` on the issue or a pull request, or close its pull requests to end it.`,
    ]);
  });

  it("on an issue whose run has ended starts a new run", async () => {
    const w = await world.begin();
    const { runId, issue } = await w.runAt("closed");

    const outcome = await w.start(await w.label(issue, "lisa"));

    const run = await w.store.runs.latestFor("acme", "api", issue);
    expect(run?.id).not.toBe(runId);
    expect(outcome).toBe(`queued run ${run?.id}`);
    expect(run).toMatchObject({ state: "queued", requested_by: WRITER });
    expect((await w.store.runs.get(runId))?.state).toBe("closed");
  });

  it("handled twice (a stop before its command was marked done) starts one run, and the retry takes it as its own", async () => {
    const w = await world.begin();
    const issue = await w.issue();
    const labeled = await w.label(issue, "lisa");

    const first = await w.start(labeled);
    expect(first).toMatch(/^queued run \d+$/);
    // Not "still open": the person who just labelled the issue is not told about their own run.
    expect(await w.start(labeled)).toBe(first);

    expect(await w.store.runs.inState("queued")).toHaveLength(1);
    expect(w.replies(issue)).toEqual([]);
    expect(w.github.reactions(REPO, issue)).toEqual([{ content: "eyes", user: "lisa[bot]" }]);
  });

  it("refused and handled twice answers once", async () => {
    const w = await world.begin();
    const issue = await w.issue();
    const labeled = await w.label(issue, "lisa", AUTHOR);

    await w.start(labeled);
    await w.start(labeled);

    expect(w.replies(issue)).toHaveLength(1);
    expect(await w.store.runs.latestFor("acme", "api", issue)).toBeUndefined();
  });
});
