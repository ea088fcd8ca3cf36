import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { isPostgresUrl } from "../../src/store/sql-driver.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { useLisaChildren } from "../support/lisa-child.ts";
import { isAlive } from "../support/process-alive.ts";
import { trackingBody } from "../support/tracking-body.ts";

// A deploy: Lisa gets SIGTERM while an agent works. It must exit cleanly within its grace period,
// leave nothing running, and resume the run at the next start without counting a crash.

const SECRET = "shutdown-test-secret-of-at-least-32-bytes";
const REPO = "acme/api";

const lisa = useLisaChildren(SECRET);

describe("SIGTERM during an agent session", () => {
  it("hands the run back within the grace period, and the next start finishes it as a resume, not a restart", async () => {
    const agent = createFakeClaude([
      { write: { "health.ts": "half\n" }, hang: true },
      { write: { "health.ts": "done\n" }, manifest: { title: "Add health", what: "Adds it." } },
    ]);
    const emulator = await lisa.emulator();
    await emulator.createRepo(REPO, {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    emulator.addCollaborator(REPO, "ann", "write");
    const dataDir = path.join(tempDir("shutdown-data"), "lisa");
    const options = { dataDir, claudeBinary: agent.binary, shutdownGraceMs: 1_000 };
    const logFile = path.join(tempDir("shutdown-log"), "lisa.log");
    const first = await lisa.start({ ...options, logFile });

    const issue = await emulator.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    await emulator.labelIssue(REPO, issue.number, "lisa", "ann");
    const pids = await waitFor("the agent to start", () => agent.hangingPids());
    first.kill("SIGTERM");
    const code = await new Promise((resolve) => first.once("exit", resolve));

    expect(code).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
    // What GitHub shows meanwhile agrees with the store: the run waits to resume, and no agent works.
    await emulator.waitForWebhooks();
    const meanwhile = trackingBody(emulator, REPO, issue.number);
    expect(meanwhile).toContain("⏳ Queued");
    expect(meanwhile).toContain("— ⏸️ interrupted; resumes where it stood");
    expect(meanwhile).not.toContain("the agent is working");
    expect(meanwhile).toMatch(/⏸️ Agent session 1: claude, implementing · \d+s · \$0\.00 · interrupted/);
    // On a shared store (PostgreSQL) any worker takes the run up again, and the line names the one stopped.
    expect(meanwhile).toMatch(
      isPostgresUrl(testStoreLocation(dataDir))
        ? /\*\*Waiting for:\*\* worker \S+ was stopped \(SIGTERM\) during this run; another worker resumes it where it stood\n/
        : /\*\*Waiting for:\*\* Lisa was stopped \(SIGTERM\) during this run; it resumes where it stood when Lisa starts again\n/,
    );
    // Queued or running, the run is Lisa's to carry on, not a person's.
    expect(emulator.labels(REPO, issue.number)).toContain("lisa:working");
    // The agent Lisa stopped is no crash in the log either.
    const log = readFileSync(logFile, "utf8");
    expect(log).toContain("agent session stopped by Lisa or a person, as recorded");
    expect(log).not.toContain("crashed");
    const handedBack = new Store(testStoreLocation(dataDir));
    const [run] = await handedBack.runs.inState("queued");
    expect(run).toMatchObject({ restarts: 0 });
    await handedBack.close();

    await lisa.start(options);
    const tracking = () => trackingBody(emulator, REPO, issue.number);
    await waitFor("the run to reach review", () => tracking().includes("Ready for review"));
    await emulator.waitForWebhooks();
    lisa.killAll();

    expect(emulator.pulls(REPO)).toHaveLength(1);
    const store = new Store(testStoreLocation(dataDir));
    const [done] = await store.runs.inState("review");
    expect(done?.restarts).toBe(0);
    const sessions = await store.sessions.of((await store.steps.of(done?.id ?? 0))[0]?.id ?? 0);
    expect(sessions.map((s) => [s.purpose, s.state])).toEqual([
      ["implement", "interrupted"],
      ["resume", "succeeded"],
    ]);
    await store.close();
  });
});
