import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { CONFIG_FRESH_MS } from "../../src/config/config-cache.ts";
import { PostgresDriver } from "../../src/store/postgres-driver.ts";
import { isPostgresUrl } from "../../src/store/sql-driver.ts";
import { SqliteDriver } from "../../src/store/sqlite-driver.ts";
import { commentPayload, reviewPayload } from "../handlers/webhook-examples.ts";
import { DELIVERY_ROUTES, fakeHelloWorld, useIntegrationContext } from "../support/integration.ts";
import { createHarness, type Harness, labeledPayload } from "../support/lisa-harness.ts";

const context = useIntegrationContext();

const CONFIG = "label: lisa\ngates:\n  - grep -q 'Hello World' README.md\n";
const fixReadme = { write: { "README.md": "# Hello World\n" }, result: "Fixed the typo." };

/** A clock the test moves on, past the window in which a read of the config vouches for its label. */
function testClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, pass: (ms: number) => (offset += ms) };
}

/** Delivers the example `issues.labeled` with another label name (and its own time, so it is a new event). */
async function label(harness: Harness, id: string, name: string) {
  const payload = (await labeledPayload()) as { label: { name: string }; issue: { updated_at: string } };
  payload.label = { ...payload.label, name };
  payload.issue.updated_at = `${id}`;
  await harness.probot.receive({ id, name: "issues", payload: payload as never });
}

/** The commands stored, read from the store as another process would. */
function storedCommands(harness: Harness): { kind: string; outcome: string | null }[] {
  const location = testStoreLocation(harness.dataDir);
  const db = isPostgresUrl(location) ? new PostgresDriver(location) : new SqliteDriver(location);
  try {
    return db.all("SELECT kind, outcome FROM commands ORDER BY id", []);
  } finally {
    db.close();
  }
}

/** `lisa_webhooks_dropped_total` by reason, from `/metrics`. */
async function dropped(harness: Harness): Promise<Record<string, number>> {
  let text = "";
  const response = { writeHead: () => response, end: (body: string) => (text = body) };
  await harness.lisa.httpHandler({ method: "GET", url: "/metrics" } as never, response as never);
  const counts: Record<string, number> = {};
  for (const [, reason, n] of text.matchAll(/^lisa_webhooks_dropped_total\{reason="(\w+)"\} (\d+)$/gm))
    counts[reason ?? ""] = Number(n);
  return counts;
}

describe("labels that are not the repository's Lisa label", () => {
  it("are stored once per window in a flood, and the `lisa` label right after it starts a run", async () => {
    const agent = createFakeClaude([fixReadme]);
    const github = fakeHelloWorld({ config: CONFIG, routes: [...DELIVERY_ROUTES] });
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary }));
    await harness.lisa.start();

    await label(harness, "flood-0", "needs-triage");
    await harness.lisa.idle();
    for (let i = 1; i < 50; i++) await label(harness, `flood-${i}`, `area-${i}`);
    await label(harness, "real", "lisa");
    await harness.lisa.idle();

    expect(storedCommands(harness)).toEqual([
      { kind: "start_run", outcome: "ignored: another label" },
      { kind: "start_run", outcome: "queued run 1" },
    ]);
    expect(await dropped(harness)).toEqual({ foreign_label: 49 });
    expect(agent.calls()).toHaveLength(1);
    expect(github.state.reactions).toEqual(["eyes"]);
    expect(github.state.pulls).toHaveLength(1);
  });

  it("are obeyed within the window when lisa.yml renames the label: `bot` starts a run once it has passed", async () => {
    const clock = testClock();
    const agent = createFakeClaude([fixReadme]);
    const github = fakeHelloWorld({ config: CONFIG, routes: [...DELIVERY_ROUTES] });
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary, now: clock.now }));
    await harness.lisa.start();
    await label(harness, "before", "needs-triage");
    await harness.lisa.idle();

    github.setConfig(CONFIG.replace("label: lisa", "label: bot"));
    await label(harness, "too-soon", "bot");
    await harness.lisa.idle();
    expect(await dropped(harness)).toEqual({ foreign_label: 1 });
    expect(agent.calls()).toEqual([]);

    clock.pass(CONFIG_FRESH_MS + 1_000);
    await label(harness, "after-window", "bot");
    await harness.lisa.idle();

    expect(storedCommands(harness).map((c) => c.outcome)).toEqual(["ignored: another label", "queued run 1"]);
    expect(agent.calls()).toHaveLength(1);
    // The second read held the first's ETag; the file had changed, so GitHub sent it whole.
    expect(github.state.configReads.map((read) => [read.ifNoneMatch !== undefined, read.status])).toEqual([
      [false, 200],
      [true, 200],
    ]);
    // Now `lisa` is the foreign one.
    await label(harness, "old-name", "lisa");
    expect(await dropped(harness)).toEqual({ foreign_label: 2 });
  });

  it("do not stop comments and reviews, which are stored whatever the cache says", async () => {
    fakeHelloWorld({ config: CONFIG, routes: ["token", "config", "permission", "comments", "comment-reactions"] });
    const agent = createFakeClaude([]);
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary }));
    await harness.lisa.start();
    await label(harness, "first", "needs-triage");
    await harness.lisa.idle();

    await label(harness, "dropped", "wontfix");
    await harness.probot.receive({ id: "comment", name: "issue_comment", payload: commentPayload("/lisa help") as never });
    const review = reviewPayload();
    review.review.body = "/lisa help";
    await harness.probot.receive({ id: "review", name: "pull_request_review", payload: review as never });
    await harness.lisa.idle();

    expect(await dropped(harness)).toEqual({ foreign_label: 1 });
    expect(storedCommands(harness).map((c) => c.kind)).toEqual(["start_run", "gesture", "gesture"]);
  });
});

describe("reading .github/lisa.yml", () => {
  it("sends the ETag of the copy held, and a 304 answers with that copy", async () => {
    const clock = testClock();
    const github = fakeHelloWorld({ config: CONFIG, routes: ["token", "config"] });
    const harness = context.use(
      createHarness({ remoteRoot: context.remoteRoot, claudeBinary: createFakeClaude([]).binary, now: clock.now }),
    );
    await harness.lisa.start();

    await label(harness, "first", "needs-triage");
    await harness.lisa.idle();
    clock.pass(CONFIG_FRESH_MS + 1_000);
    await label(harness, "second", "wontfix");
    await harness.lisa.idle();

    const [first, second] = github.state.configReads;
    expect(first).toEqual({ ifNoneMatch: undefined, status: 200 });
    expect(second?.ifNoneMatch).toMatch(/^W\/"[0-9a-f]{40}"$/);
    expect(second?.status).toBe(304);
    expect(storedCommands(harness).map((c) => c.outcome)).toEqual(["ignored: another label", "ignored: another label"]);
    // The label the copy names vouches again: a third label within the window is dropped.
    await label(harness, "third", "duplicate");
    expect(await dropped(harness)).toEqual({ foreign_label: 1 });
  });

  it("asks the owner's .github repository once per window, not for every command, when the repository has no file", async () => {
    const github = fakeHelloWorld({ config: null, role: "read", routes: ["token", "config", "permission", "comments"] });
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: createFakeClaude([]).binary }));
    await harness.lisa.start();

    await label(harness, "other", "needs-triage");
    await harness.lisa.idle();
    await label(harness, "lisa", "lisa");
    await harness.lisa.idle();

    const configReads = github.state.requests.filter((r) => r.includes("/contents/.github"));
    expect(configReads).toEqual([
      "GET /repos/Codertocat/Hello-World/contents/.github/lisa.yml",
      "GET /repos/Codertocat/.github/contents/.github/lisa.yml",
      "GET /repos/Codertocat/Hello-World/contents/.github/lisa.yml",
    ]);
    expect(storedCommands(harness).map((c) => c.outcome)).toEqual(["ignored: another label", "denied: Codertocat has role read"]);
  });
});
