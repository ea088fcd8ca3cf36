import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import type { GitHubEmulator } from "../../emulator/github-emulator.ts";
import { CONFIG_FRESH_MS } from "../../src/config/config-cache.ts";
import { SURE_COMMAND, UNSURE_COMMAND } from "../../src/store/commands.ts";
import { PostgresDriver } from "../../src/store/postgres-driver.ts";
import { sql } from "../../src/store/sql.ts";
import { isPostgresUrl } from "../../src/store/sql-driver.ts";
import { SqliteDriver } from "../../src/store/sqlite-driver.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { BRANCH, createHelloWorld, DELIVERY_ROUTES, HELLO_WORLD, ISSUE, OWNER, routesTaken } from "../support/hello-world.ts";
import { parsePrometheusText } from "../support/prometheus-text.ts";

const CONFIG = "label: lisa\ngates:\n  - grep -q 'Hello World' README.md\n";
const fixReadme = { write: { "README.md": "# Hello World\n" }, result: "Fixed the typo." };
const R = "/repos/:owner/:repo";
const TOKEN_ROUTE = "POST /app/installations/:id/access_tokens";
const CONFIG_ROUTE = `GET ${R}/contents/*path`;
const PERMISSION_ROUTE = `GET ${R}/collaborators/:username/permission`;
const COMMENT_ROUTES = [`GET ${R}/issues/:number/comments`, `POST ${R}/issues/:number/comments`];
const CONFIG_FILE = `/repos/${HELLO_WORLD}/contents/.github/lisa.yml`;

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** Lisa against the emulator, holding Codertocat's Hello-World with `config` and issue #1. */
async function helloWorld(options: { claudeBinary: string; config: string; now?: () => number }): Promise<EmulatedLisa> {
  env = await startEmulatedLisa({ claudeBinary: options.claudeBinary, ...(options.now ? { now: options.now } : {}) });
  await createHelloWorld(env.github, options.config);
  await env.settle();
  return env;
}

/** A clock the test moves on, past the window in which a read of the config vouches for its label. */
function testClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, pass: (ms: number) => (offset += ms) };
}

/** `sender` (Codertocat unless said) adds `name` to issue #1; resolves once Lisa has answered the webhook. */
async function label(e: EmulatedLisa, name: string, sender = OWNER): Promise<void> {
  await e.github.labelIssue(HELLO_WORLD, ISSUE, name, sender);
  await e.github.waitForWebhooks();
}

/** The commands stored, read from the store as another process would. */
async function storedCommands(e: EmulatedLisa): Promise<{ kind: string; outcome: string | null }[]> {
  return (await storedRows(e)).map(({ kind, outcome }) => ({ kind, outcome }));
}

async function storedRows(e: EmulatedLisa): Promise<{ kind: string; outcome: string | null; priority: number; issue: string }[]> {
  const location = testStoreLocation(e.dataDir);
  const db = isPostgresUrl(location) ? new PostgresDriver(location) : new SqliteDriver(location);
  try {
    return (
      await db.all<{ kind: string; outcome: string | null; priority: number; issue: string }>(
        sql`SELECT kind, outcome, priority, issue FROM commands ORDER BY id`,
      )
    ).map((row) => ({ ...row, priority: Number(row.priority) }));
  } finally {
    await db.close();
  }
}

/** `lisa_webhooks_dropped_total` by reason, from `/metrics` as Prometheus scrapes it. */
async function dropped(e: EmulatedLisa): Promise<Record<string, number>> {
  const response = await fetch(new URL("/metrics", e.webhookUrl));
  const { samples } = parsePrometheusText(await response.text());
  const counts: Record<string, number> = {};
  for (const sample of samples.filter((s) => s.name === "lisa_webhooks_dropped_total"))
    counts[sample.labels.reason ?? ""] = sample.value;
  return counts;
}

/** Each read of Hello-World's `.github/lisa.yml`: whether it held an ETag, and GitHub's answer. */
const configReads = (github: GitHubEmulator) =>
  github.requests().filter((r) => r.method === "GET" && r.path.split("?")[0] === CONFIG_FILE);

/** Lisa took no route but these, as the HTTP mock that answered only them required. */
const expectRoutesWithin = (e: EmulatedLisa, routes: string[]) =>
  expect(routes).toEqual(expect.arrayContaining(routesTaken(e.github)));

describe("labels that are not the repository's Lisa label", () => {
  it("are stored once per window in a flood, and the `lisa` label right after it starts a run", async () => {
    const agent = createFakeClaude([fixReadme]);
    const e = await helloWorld({ claudeBinary: agent.binary, config: CONFIG });

    await label(e, "needs-triage");
    await e.settle();
    for (let i = 1; i < 50; i++) await label(e, `area-${i}`);
    await label(e, "lisa");
    await e.settle();

    // The first label, before any read of the config, waited behind what is surely Lisa's.
    const issue = `${HELLO_WORLD}#${ISSUE}`.toLowerCase();
    expect(await storedRows(e)).toEqual([
      { kind: "start_run", outcome: "ignored: another label", priority: UNSURE_COMMAND, issue },
      { kind: "start_run", outcome: "queued run 1", priority: SURE_COMMAND, issue },
    ]);
    expect(await dropped(e)).toEqual({ foreign_label: 49 });
    expect(agent.calls()).toHaveLength(1);
    expect(e.github.reactions(HELLO_WORLD, ISSUE).map((r) => r.content)).toEqual(["eyes"]);
    expect(e.github.pulls(HELLO_WORLD)).toHaveLength(1);
    expectRoutesWithin(e, DELIVERY_ROUTES);
  });

  it("are obeyed within the window when lisa.yml renames the label: `bot` starts a run once it has passed", async () => {
    const clock = testClock();
    const agent = createFakeClaude([fixReadme]);
    const e = await helloWorld({ claudeBinary: agent.binary, config: CONFIG, now: clock.now });
    await label(e, "needs-triage");
    await e.settle();

    await e.github.pushCommit(HELLO_WORLD, "master", {
      files: { ".github/lisa.yml": CONFIG.replace("label: lisa", "label: bot") },
      message: "Call Lisa with bot",
      user: OWNER,
    });
    await label(e, "bot");
    await e.settle();
    expect(await dropped(e)).toEqual({ foreign_label: 1 });
    expect(agent.calls()).toEqual([]);

    clock.pass(CONFIG_FRESH_MS + 1_000);
    // The same label again, as a new event: GitHub sends none for a label the issue already has.
    await e.github.unlabelIssue(HELLO_WORLD, ISSUE, "bot", OWNER);
    await label(e, "bot");
    await e.settle();

    // Taking the label off is stored too (a writer's may stop a run, rule 24); here there was none.
    expect((await storedCommands(e)).map((c) => c.outcome)).toEqual([
      "ignored: another label",
      "issue unlabeled: no run",
      "queued run 1",
    ]);
    expect(agent.calls()).toHaveLength(1);
    // The second read held the first's ETag; the file had changed, so GitHub sent it whole.
    expect(configReads(e.github).map((read) => [read.ifNoneMatch !== undefined, read.status])).toEqual([
      [false, 200],
      [true, 200],
    ]);
    // Now `lisa` is the foreign one.
    await label(e, "lisa");
    expect(await dropped(e)).toEqual({ foreign_label: 2 });
    expectRoutesWithin(e, DELIVERY_ROUTES);
  });

  it("let an issue closed with none of Lisa's labels go unstored; one closed with Lisa's label is stored", async () => {
    const agent = createFakeClaude([]);
    const e = await helloWorld({ claudeBinary: agent.binary, config: CONFIG });
    // An issue Lisa never worked on, and one that carries her label (its run aside: none here).
    const other = await e.github.createIssue(HELLO_WORLD, { title: "Unrelated", body: "", user: OWNER });
    await e.github.closeIssue(HELLO_WORLD, other.number, OWNER);
    await label(e, "lisa", "lisa[bot]");
    await e.github.closeIssue(HELLO_WORLD, ISSUE, OWNER);
    await e.github.waitForWebhooks();
    await e.settle();

    expect(await dropped(e)).toEqual({ no_lisa_label: 1 });
    expect(await storedCommands(e)).toEqual([{ kind: "gesture", outcome: "issue closed: no run" }]);
  });

  it("do not stop comments and reviews, which are stored whatever the cache says", async () => {
    const agent = createFakeClaude([]);
    const e = await helloWorld({ claudeBinary: agent.binary, config: CONFIG });
    // Pull request #2, from a branch of Lisa's, for the review to be on.
    gitIn(e.github.gitDir(HELLO_WORLD), "branch", BRANCH, "master");
    await e.github.pushCommit(HELLO_WORLD, BRANCH, { files: { "README.md": "# Hello World\n" }, message: "Fix", user: OWNER });
    const opened = await fetch(`${e.github.apiUrl}/repos/${HELLO_WORLD}/pulls`, {
      method: "POST",
      headers: { authorization: `token ${e.github.createPersonalToken(OWNER)}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "Fix the typo", head: BRANCH, base: "master" }),
    });
    expect(opened.status).toBe(201);
    const pull = ((await opened.json()) as { number: number }).number;
    await e.settle();
    const setup = e.github.requests().length;

    await label(e, "needs-triage");
    await e.settle();

    await label(e, "wontfix");
    await e.github.commentOnIssue(HELLO_WORLD, ISSUE, "/lisa help", OWNER);
    await e.github.submitReview(HELLO_WORLD, pull, { state: "COMMENTED", body: "/lisa help", user: OWNER });
    await e.settle();

    expect(await dropped(e)).toEqual({ foreign_label: 1 });
    expect((await storedCommands(e)).map((c) => c.kind)).toEqual(["start_run", "gesture", "gesture"]);
    const lisaRoutes = routesTaken(e.github, setup);
    const answered = [TOKEN_ROUTE, CONFIG_ROUTE, PERMISSION_ROUTE, ...COMMENT_ROUTES, `POST ${R}/issues/comments/:id/reactions`];
    expect(answered).toEqual(expect.arrayContaining(lisaRoutes));
  });
});

describe("reading .github/lisa.yml", () => {
  it("sends the ETag of the copy held, and a 304 answers with that copy", async () => {
    const clock = testClock();
    const e = await helloWorld({ claudeBinary: createFakeClaude([]).binary, config: CONFIG, now: clock.now });

    await label(e, "needs-triage");
    await e.settle();
    clock.pass(CONFIG_FRESH_MS + 1_000);
    await label(e, "wontfix");
    await e.settle();

    const [first, second] = configReads(e.github);
    expect(first?.ifNoneMatch).toBeUndefined();
    expect(first?.status).toBe(200);
    expect(second?.ifNoneMatch).toMatch(/^W\/"[0-9a-f]{40}"$/);
    expect(second?.status).toBe(304);
    expect((await storedCommands(e)).map((c) => c.outcome)).toEqual(["ignored: another label", "ignored: another label"]);
    // The label the copy names vouches again: a third label within the window is dropped.
    await label(e, "duplicate");
    expect(await dropped(e)).toEqual({ foreign_label: 1 });
    expectRoutesWithin(e, [TOKEN_ROUTE, CONFIG_ROUTE]);
  });

  it("reads it once for labels stored while that read was under way, not once more for each", async () => {
    const e = await helloWorld({ claudeBinary: createFakeClaude([]).binary, config: CONFIG });
    // GitHub slow with the first read: the labels after the first arrive, and are stored, meanwhile.
    e.github.injectFault({ method: "GET", path: /\/contents\/\.github\/lisa\.yml/, kind: "slow", delayMs: 1_000 });

    await label(e, "needs-triage");
    await label(e, "wontfix");
    await label(e, "duplicate");
    await e.settle();

    expect((await storedCommands(e)).map((c) => c.outcome)).toEqual([
      "ignored: another label",
      "ignored: another label",
      "ignored: another label",
    ]);
    // Each later label was stored before that read ended, so it vouches for them too.
    expect(configReads(e.github).map((read) => read.status)).toEqual([200]);
    expectRoutesWithin(e, [TOKEN_ROUTE, CONFIG_ROUTE]);
  });

  it("asks the owner's .github repository once per window, not for every command, when the repository has no file", async () => {
    env = await startEmulatedLisa({ claudeBinary: createFakeClaude([]).binary });
    const e = env;
    await e.github.createRepo(HELLO_WORLD, { defaultBranch: "master", files: { "README.md": "# Hello Wrold\n" } });
    // Codertocat owns Hello-World, so is its admin: a reader labels instead.
    e.github.addCollaborator(HELLO_WORLD, "octocat", "read");
    await e.github.createIssue(HELLO_WORLD, { title: "Spelling error in the README file", user: OWNER });
    await e.settle();

    await label(e, "needs-triage", "octocat");
    await e.settle();
    await label(e, "lisa", "octocat");
    await e.settle();

    const reads = e.github
      .requests()
      .filter((r) => r.path.includes("/contents/.github"))
      .map((r) => `${r.method} ${r.path.split("?")[0]}`);
    expect(reads).toEqual([
      "GET /repos/Codertocat/Hello-World/contents/.github/lisa.yml",
      "GET /repos/Codertocat/.github/contents/.github/lisa.yml",
      "GET /repos/Codertocat/Hello-World/contents/.github/lisa.yml",
    ]);
    expect((await storedCommands(e)).map((c) => c.outcome)).toEqual(["ignored: another label", "denied: octocat has role read"]);
    expectRoutesWithin(e, [TOKEN_ROUTE, CONFIG_ROUTE, PERMISSION_ROUTE, ...COMMENT_ROUTES]);
  });
});
