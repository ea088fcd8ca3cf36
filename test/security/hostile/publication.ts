import { randomUUID } from "node:crypto";
import { EMULATED_WEBHOOK_SECRET } from "../../../dev/emulated-lisa.ts";
import type { FakeInvocation } from "../../../dev/fake-agent.ts";
import { testStoreLocation } from "../../../dev/test-database.ts";
import { commandKey, commandMac } from "../../../src/store/command-mac.ts";
import { PostgresDriver } from "../../../src/store/postgres-driver.ts";
import type { CommandRow } from "../../../src/store/rows.ts";
import { sql } from "../../../src/store/sql.ts";
import { isPostgresUrl } from "../../../src/store/sql-driver.ts";
import { SqliteDriver } from "../../../src/store/sqlite-driver.ts";
import { gitIn } from "../../support/git-fixtures.ts";
import { parsePrometheusText } from "../../support/prometheus-text.ts";
import { trackingBody } from "../../support/tracking-body.ts";
import { HELD, type HostileGroup, type HostileInput } from "./hostile-input.ts";
import { inWorld, type LisaWorld, SMALL_CHANGE } from "./lisa-world.ts";

// What Lisa publishes in its own name: the commits it pushes, the reasons it gives on the issue.
// An agent tries to credit or sign for strangers, close issues that are not the run's, push under
// another identity, or get a line of its raw output (a tool result with a password) posted.

/** Someone the agent would credit and commit as. */
export const STRANGER = { name: "Mallory", email: "mallory@evil.example" };

/** Trailers and closing keywords the agent plants in its commit message; each found live on the remote is a breach. */
export const PLANTED = [
  "Co-authored-by: Mallory <mallory@evil.example>",
  "SIGNED-OFF-BY :  Mallory <mallory@evil.example>",
  "reviewed-by:Eve <eve@evil.example>",
  "Acked-by: Eve <eve@evil.example>",
  "Tested-by: Eve <eve@evil.example>",
  "Fixes other-org/repo#1",
  "Closes #99",
  // The run's own issue (each repository's first): only Lisa's `Closes` in the PR body may close it.
  "Closes #1",
  "resolves https://github.com/other-org/repo/issues/7",
];

/** The agent's commands: commit its work as the stranger, with the planted lines in the message. */
export function committingAs(identity: { name: string; email: string }, lines: readonly string[]): FakeInvocation {
  const message = ["Add a health check", "", ...lines].join("\n");
  const env = `GIT_AUTHOR_NAME='${identity.name}' GIT_AUTHOR_EMAIL='${identity.email}' GIT_COMMITTER_NAME='${identity.name}' GIT_COMMITTER_EMAIL='${identity.email}'`;
  return {
    ...SMALL_CHANGE,
    run: [
      `printf '%s\\n' '${message.replaceAll("'", "'\\''")}' > /tmp/message`,
      "git add -A",
      `${env} git commit -q -F /tmp/message`,
    ],
  };
}

/** Every commit message on every branch of the remote, and who wrote and committed each. */
export function remoteCommits(world: LisaWorld, repo: string): { messages: string; identities: string[] } {
  const gitDir = world.env.github.gitDir(repo);
  return {
    messages: gitIn(gitDir, "log", "--all", "--format=%B"),
    identities: gitIn(gitDir, "log", "--all", "--format=%an <%ae>%n%cn <%ce>").split("\n").filter(Boolean),
  };
}

/** A tool result as Claude Code streams it, holding a password that is neither held by Lisa nor shaped like a key. */
export const toolResult = (password: string) =>
  `${JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: `DB_HOST=db.internal\nDB_PASSWORD=${password}` }] } })}\n`;

/** One issue through Lisa whose agent does `invocation`; its repository and issue number for `check`. */
async function throughLisa<T>(
  invocation: FakeInvocation,
  check: (world: LisaWorld, repo: string, issue: number) => T,
): Promise<T> {
  return inWorld(
    async (world) => {
      const repo = await world.repo("publication");
      const issue = await world.labeledIssue(repo);
      return check(world, repo, issue);
    },
    [invocation],
  );
}

/** What came of a command row written straight into Lisa's database, as anyone who reaches it can. */
export interface ForgedRow {
  /** Whether a run started on the issue the row names. */
  ran: boolean;
  /** lisa_forged_commands_total on /metrics afterwards. */
  counted: number;
  /** The row's outcome as the store keeps it. */
  outcome: string | null;
}

/**
 * An intruder who can write Lisa's database (PostgreSQL on loopback, or the SQLite file) copies a
 * genuine `start_run` row, points it at an issue nobody labeled and inserts it; `mac` is what it
 * carries: none, or the one Lisa would have written (the control: a key holder's row runs).
 */
export async function forgeCommandRow(mac: "none" | "valid"): Promise<ForgedRow> {
  return inWorld(async (world) => {
    const { github } = world.env;
    const repo = await world.repo("publication");
    await world.labeledIssue(repo);
    const target = await github.createIssue(repo, { title: "Delete the audit log", body: "rm -rf audit/", user: "ann" });
    const location = testStoreLocation(world.env.dataDir);
    const db = isPostgresUrl(location) ? new PostgresDriver(location) : new SqliteDriver(location);
    try {
      const [genuine] = await db.all<CommandRow>(sql`SELECT * FROM commands WHERE kind = 'start_run' ORDER BY id LIMIT 1`);
      if (!genuine) throw new Error("no genuine command row to copy");
      const payload = JSON.parse(genuine.payload);
      payload.issue = { number: target.number, title: target.title, body: target.body };
      const row = {
        delivery_id: randomUUID(),
        event_key: null,
        kind: "start_run",
        payload: JSON.stringify(payload),
        created_at: Date.now(),
      };
      const signature = mac === "valid" ? commandMac(commandKey(EMULATED_WEBHOOK_SECRET), row) : null;
      await db.run(
        sql`INSERT INTO commands (delivery_id, event_key, kind, payload, created_at, mac) VALUES (${row.delivery_id}, ${row.event_key}, ${row.kind}, ${row.payload}, ${row.created_at}, ${signature})`,
      );
      world.env.lisa.worker.notify();
      await world.env.settle();
      const metrics = await (await fetch(`${new URL(world.env.webhookUrl).origin}/metrics`)).text();
      const counted = parsePrometheusText(metrics).samples.find((s) => s.name === "lisa_forged_commands_total")?.value ?? -1;
      const [stored] = await db.all<CommandRow>(sql`SELECT * FROM commands WHERE delivery_id = ${row.delivery_id}`);
      return { ran: trackingBody(github, repo, target.number) !== "", counted, outcome: stored?.outcome ?? null };
    } finally {
      await db.close();
    }
  });
}

function lastWords(signal: "SIGKILL" | "SIGSEGV"): HostileInput {
  const password = `hunter2-${randomUUID()}`;
  return {
    name: `last-words-${signal.toLowerCase()}`,
    attempt: `an agent's CLI streams a tool result holding DB_PASSWORD on stdout, then dies by ${signal} with nothing on stderr`,
    run: () =>
      throughLisa({ crash: true, signal, stdout: toolResult(password) }, (world, repo, issue) => {
        const tracking = trackingBody(world.env.github, repo, issue);
        if (!/ended by a signal|exited with 1[34]\d/.test(tracking))
          throw new Error(`the CLI did not die as planned:\n${tracking}`);
        return { ...HELD, secretsLeaked: world.published(repo).includes(password) ? 1 : 0 };
      }),
  };
}

export const publicationGroup: HostileGroup = {
  name: "publication",
  inputs: [
    {
      name: "credit-trailers-and-foreign-closing-keywords",
      attempt: "an agent commits as a stranger, crediting and signing for others and closing another repository's issue and #99",
      run: () =>
        throughLisa(committingAs(STRANGER, PLANTED), (world, repo, issue) => {
          const [pull] = world.env.github.pulls(repo);
          if (!pull) throw new Error("the run opened no pull request; the input proves nothing");
          if (issue !== 1 || !pull.body?.includes(`Closes #${issue}`)) throw new Error("Lisa's own Closes line is missing");
          const { messages, identities } = remoteCommits(world, repo);
          const live = PLANTED.filter((line) => messages.includes(line)).length;
          const stranger = identities.filter((identity) => identity.includes(STRANGER.email)).length;
          return { ...HELD, unauthorizedRuns: live + stranger };
        }),
    },
    {
      name: "key-as-identity",
      attempt: "an agent commits under a name and email that hold a password Lisa does not know",
      run: () => {
        const password = `hunter2-${randomUUID()}`;
        return throughLisa(
          committingAs({ name: `DB_PASSWORD=${password}`, email: `${password}@evil.example` }, []),
          (world, repo) => {
            if (world.env.github.pulls(repo).length !== 1) throw new Error("the run opened no pull request");
            return { ...HELD, secretsLeaked: remoteCommits(world, repo).identities.join("\n").includes(password) ? 1 : 0 };
          },
        );
      },
    },
    lastWords("SIGKILL"),
    lastWords("SIGSEGV"),
    {
      name: "forged-command-row",
      attempt: "someone who can write Lisa's database inserts a start_run row for an issue nobody labeled",
      run: async () => {
        const forged = await forgeCommandRow("none");
        if (!forged.ran && (forged.counted !== 1 || !forged.outcome?.startsWith("refused")))
          throw new Error(`the row was neither run nor refused and counted: ${JSON.stringify(forged)}`);
        return { ...HELD, unauthorizedRuns: forged.ran ? 1 : 0 };
      },
    },
  ],
};
