import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testDatabaseUrl } from "../../dev/test-database.ts";

// `/lisa fix` and `/lisa skip` change a run, its pass and its steps together. Written one record at
// a time, a write that failed half-way (a full disk, a lost connection, a crash) left the steps and
// the pass moved and the run blocked: a second `/lisa fix` found nothing blocked, and the run stayed
// blocked for good (issue 23). Here the store refuses the run's own write, and the second try delivers.

const REPO = "acme/api";
const BLOCKED = {
  write: { "health.ts": "export const health = () => 'maybe';\n" },
  manifest: {
    title: "Add a health check",
    what: "Half of health().",
    recommendation: "blocked",
    blocked: { tried: "Two designs.", needed: "Which status codes count as healthy." },
  },
};
const DONE = {
  write: { "health.ts": "export const health = () => 'ok';\n" },
  manifest: { title: "Add a health check", what: "health()." },
};

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** A run blocked in its first pass, and a switch that makes the store refuse to queue any run. */
async function blockedRun(context: { skip: (note: string) => never }) {
  const agent = createFakeClaude([BLOCKED, DONE]);
  env = await startEmulatedLisa({ claudeBinary: agent.binary });
  const { github, lisa, dataDir } = env;
  if (testDatabaseUrl(dataDir)) return context.skip("the refusal is a SQLite trigger");
  await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
  github.addCollaborator(REPO, "ann", "write");
  const issue = await github.createIssue(REPO, { title: "Add a health check", body: "", user: "ann" });
  await github.labelIssue(REPO, issue.number, "lisa", "ann");
  await env.settle();
  const run = await lisa.store.runs.latestFor("acme", "api", issue.number);
  if (!run) throw new Error("no run");
  expect(run.state).toBe("blocked");
  const db = new DatabaseSync(path.join(dataDir, "lisa.db"));
  return {
    agent,
    issue,
    /** What the store holds of the run, its pass and its steps. */
    held: async () => ({
      run: (await lisa.store.runs.get(run.id))?.state,
      pass: (await lisa.store.passes.current(run.id))?.state,
      steps: (await lisa.store.steps.of(run.id)).map((s) => s.state),
    }),
    refuseRunWrites(on: boolean) {
      db.exec(
        on
          ? "CREATE TRIGGER refuse_run_moves BEFORE UPDATE OF state ON runs WHEN NEW.state = 'queued' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END"
          : "DROP TRIGGER refuse_run_moves",
      );
    },
    close: () => db.close(),
  };
}

describe("a change of run, pass and steps the store refuses half-way", () => {
  it("leaves all three as they were, and /lisa fix said again delivers", async (context) => {
    const { held, refuseRunWrites, close, issue, agent } = await blockedRun(context);
    const github = env?.github;
    if (!github || !env) throw new Error("no emulator");
    const before = await held();
    expect(before).toEqual({ run: "blocked", pass: "blocked", steps: ["blocked"] });

    refuseRunWrites(true);
    await github.commentOnIssue(REPO, issue.number, "/lisa fix the status codes are 200 and 204", "ann");
    await env.settle();
    expect(await held()).toEqual(before);

    refuseRunWrites(false);
    close();
    await github.commentOnIssue(REPO, issue.number, "/lisa fix the status codes are 200 and 204", "ann");
    await env.settle();
    expect(await held()).toEqual({ run: "review", pass: "at_gate", steps: ["delivered"] });
    expect(agent.calls()).toHaveLength(2);
    expect(github.pulls(REPO)).toHaveLength(1);
  }, 120_000);

  it("leaves all three as they were on /lisa skip, and /lisa skip said again goes on to review", async (context) => {
    const { held, refuseRunWrites, close, issue } = await blockedRun(context);
    const github = env?.github;
    if (!github || !env) throw new Error("no emulator");
    const before = await held();

    refuseRunWrites(true);
    await github.commentOnIssue(REPO, issue.number, "/lisa skip", "ann");
    await env.settle();
    expect(await held()).toEqual(before);

    refuseRunWrites(false);
    close();
    await github.commentOnIssue(REPO, issue.number, "/lisa skip", "ann");
    await env.settle();
    expect(await held()).toMatchObject({ run: "review", steps: ["skipped"] });
  }, 120_000);
});
