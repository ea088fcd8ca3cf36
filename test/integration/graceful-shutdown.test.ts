import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
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
    const first = await lisa.start(options);

    const issue = await emulator.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    await emulator.labelIssue(REPO, issue.number, "lisa", "ann");
    const pids = await waitFor("the agent to start", () => agent.hangingPids());
    first.kill("SIGTERM");
    const code = await new Promise((resolve) => first.once("exit", resolve));

    expect(code).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
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
