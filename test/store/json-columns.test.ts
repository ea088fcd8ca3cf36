import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

// The store decodes its JSON columns once: callers get domain values, and a column an older Lisa
// or a damaged row left unreadable reads as what callers took it for before (an empty list, none).

async function oneRun() {
  const dir = tempDir("json-columns");
  const file = testDatabaseUrl(dir) ?? path.join(dir, "lisa.db");
  const store = new Store(file);
  const run = await store.runs.create(newRun(1), oneStep(1));
  const [step] = await store.steps.of(run?.id ?? 0);
  const pass = await store.passes.current(run?.id ?? 0);
  if (!run || !step || !pass) throw new Error("no run");
  return { file, store, runId: run.id, stepId: step.id, passId: pass.id };
}

describe("the store's JSON columns", () => {
  it("come back as the values written, and null stays null", async () => {
    const { store, stepId, passId } = await oneRun();
    const gate = {
      repo: "acme/api",
      number: 5,
      url: "u",
      status: "approved" as const,
      approvers: ["bob"],
      blockers: [],
      headSha: "abc",
    };
    const gates = [{ command: "npm test", passed: false, output: "FAIL" }];
    const files = [{ path: "a.ts", added: 2, deleted: 1 }];
    await store.steps.record(stepId, { gate, gates, changed_files: files, manifest: { title: "T", what: "W" } });
    expect(await store.steps.get(stepId)).toMatchObject({
      gate,
      gates,
      changed_files: files,
      manifest: { title: "T", what: "W" },
    });
    expect(await store.steps.get(stepId)).toMatchObject({ ci_failure: null });
    const record = await store.steps.inPass(stepId, passId);
    await store.steps.recordInPass(record?.id ?? 0, { human_shas: [{ sha: "s", author: "a", subject: "x" }] });
    expect(await store.steps.inPass(stepId, passId)).toMatchObject({
      human_shas: [{ sha: "s", author: "a", subject: "x" }],
      gates: null,
    });
    await store.close();
  });

  it("read an unreadable column as an empty list or none, never throwing (SQLite: the file is written beside the store)", async (context) => {
    if (testDatabaseUrl(tempDir("probe"))) context.skip();
    const { file, store, runId, stepId, passId } = await oneRun();
    const db = new DatabaseSync(file);
    db.prepare(
      "UPDATE steps SET gates = 'not json', changed_files = '[{\"path\":1}]', gate = '{\"status\":\"odd\"}', manifest = '{}', ci_failure = '[]' WHERE id = ?",
    ).run(stepId);
    db.prepare("UPDATE passes SET refinements = '{', open_questions = '[1]' WHERE id = ?").run(passId);
    db.prepare("UPDATE step_passes SET human_shas = 'null', gates = '' WHERE pass_id = ?").run(passId);
    db.close();
    expect(await store.steps.get(stepId)).toMatchObject({
      gates: [],
      changed_files: [],
      gate: null,
      manifest: null,
      ci_failure: null,
    });
    expect(await store.passes.current(runId)).toMatchObject({ refinements: [], open_questions: [] });
    expect(await store.steps.inPass(stepId, passId)).toMatchObject({ human_shas: [], gates: [] });
    await store.close();
  });
});
