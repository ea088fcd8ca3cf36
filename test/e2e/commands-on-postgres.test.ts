import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { EMULATED_WEBHOOK_SECRET, type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { freshSchemaUrl, requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { commandKey } from "../../src/store/command-mac.ts";
import { Store } from "../../src/store/store.ts";

// On PostgreSQL, commands went to whichever worker held the store's `inbox` lock, which drained the
// commands table on a poll of its own every second. They go through pg-boss now (issue 23): any
// worker is handed a command when it is stored, and a stored command whose queueing was lost (a web
// process stopped between the two) is queued again by a worker.

let base: string;
let env: EmulatedLisa | undefined;
const stores: Store[] = [];
beforeAll(async () => {
  base = await requirePostgres();
});
afterEach(async () => {
  await env?.stop();
  env = undefined;
  for (const store of stores.splice(0)) await store.close();
});

const REPO = "acme/api";
const eyesOn = (lisa: EmulatedLisa, issue: number) =>
  lisa.github.requests().some((r) => r.method === "POST" && r.path === `/repos/${REPO}/issues/${issue}/reactions`);

async function lisaOnPostgres() {
  const databaseUrl = freshSchemaUrl(base, "test_pgcommands");
  const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } }]);
  env = await startEmulatedLisa({ claudeBinary: agent.binary, databaseUrl });
  await env.github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
  env.github.addCollaborator(REPO, "ann", "write");
  // Another process on the same database, signing as Lisa does.
  const other = new Store(databaseUrl, Date.now, commandKey(EMULATED_WEBHOOK_SECRET));
  stores.push(other);
  return { env, other };
}

describe("commands on PostgreSQL", () => {
  it("are handed to a worker by pg-boss: none waits for the inbox lock another process holds", async () => {
    const { env, other } = await lisaOnPostgres();
    const issue = await env.github.createIssue(REPO, { title: "Add a health check", body: "", user: "ann" });
    let seen = false;
    await other.exclusively("inbox", async () => {
      await env.github.labelIssue(REPO, issue.number, "lisa", "ann");
      await waitFor("the 👀 on the label", () => eyesOn(env, issue.number), 20_000);
      seen = true;
    });
    expect(seen).toBe(true);
    await env.settle();
    expect(env.github.pulls(REPO)).toHaveLength(1);
  }, 60_000);

  it("a stored command whose queueing was lost is queued again by a worker, and handled once", async () => {
    const { env, other } = await lisaOnPostgres();
    const issue = await env.github.createIssue(REPO, { title: "Add a health check", body: "", user: "ann" });
    // What a web process stored just before it stopped, without telling pg-boss.
    const id = await other.commands.add("lost-on-the-way", "start_run", {
      installationId: env.github.installationId,
      owner: "acme",
      repo: "api",
      defaultBranch: "main",
      issue: { number: issue.number, title: issue.title, body: "" },
      label: "lisa",
      sender: "ann",
    });
    expect(id).toBeTypeOf("number");
    await waitFor("the stranded command to be handled", () => eyesOn(env, issue.number), 30_000);
    await env.settle();
    expect((await other.commands.get(id ?? 0))?.state).toBe("done");
    expect(env.github.pulls(REPO)).toHaveLength(1);
  }, 60_000);
});
