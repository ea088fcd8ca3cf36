import { rmSync } from "node:fs";
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

// E2E-17: Lisa killed with SIGKILL in the middle of pass 2 and started again on the same data:
// pass 2 finishes once, with one package comment per pass, one pull request and one reply per command.

const SECRET = "crash-test-secret-of-at-least-32-bytes";
const REPO = "acme/api";

const lisa = useLisaChildren(SECRET);

describe("Lisa killed during pass 2", () => {
  it("finishes the pass after a restart without a second pass, package, reply or pull request", async () => {
    const agent = createFakeClaude([
      { write: { "health.ts": "v1\n" }, manifest: { title: "Add health", what: "v1." } },
      // Pass 2's first session hangs, as an agent mid-work; Lisa is killed under it.
      { write: { "health.ts": "v2 partial\n" }, hang: true },
      { write: { "health.ts": "v2\n" }, manifest: { title: "Add health", what: "v2." } },
    ]);
    const emulator = await lisa.emulator();
    await emulator.createRepo(REPO, {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    emulator.addCollaborator(REPO, "ann", "write");
    const dataDir = path.join(tempDir("crash-data"), "lisa");
    const first = await lisa.start({ dataDir, claudeBinary: agent.binary });

    const issue = await emulator.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    await emulator.labelIssue(REPO, issue.number, "lisa", "ann");
    const tracking = () => trackingBody(emulator, REPO, issue.number);
    await waitFor("pass 1 to reach review", () => tracking().includes("pass 1 · 👀 Ready for review"));
    const [pull] = emulator.pulls(REPO);
    if (!pull) throw new Error("no pull request");

    await emulator.commentOnIssue(REPO, pull.number, "/lisa redirect serve v2", "ann");
    const pids = await waitFor("pass 2's agent to start", () => agent.hangingPids());
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));

    await lisa.start({ dataDir, claudeBinary: agent.binary });
    await waitFor("pass 2 to reach review", () => tracking().includes("pass 2 · 👀 Ready for review"));
    await emulator.waitForWebhooks();

    expect(pids.filter(isAlive)).toEqual([]);
    expect(agent.calls()).toHaveLength(3);
    expect(emulator.pulls(REPO)).toHaveLength(1);
    expect(await emulator.readFile(REPO, "health.ts", pull.head.ref)).toBe("v2\n");
    const comments = emulator.comments(REPO, pull.number);
    expect(comments.filter((c) => c.body.includes("<!-- lisa:pass run=1 pass=1 "))).toHaveLength(1);
    expect(comments.filter((c) => c.body.includes("<!-- lisa:pass run=1 pass=2 "))).toHaveLength(1);
    // The redirect's answer is pass 2's own comment: no reply beside it, before the crash or after.
    expect(comments.filter((c) => c.body.includes("<!-- lisa:reply "))).toHaveLength(0);
    expect(emulator.comments(REPO, issue.number).filter((c) => c.body.includes("lisa:tracking"))).toHaveLength(1);
    lisa.killAll();
    const store = new Store(testStoreLocation(dataDir));
    const [run] = await store.runs.inState("review");
    expect((await store.passes.of(run?.id ?? 0)).map((p) => [p.number, p.state])).toEqual([
      [1, "superseded"],
      [2, "at_gate"],
    ]);
    const sessions = (await store.sessions.of((await store.steps.of(run?.id ?? 0))[0]?.id ?? 0)).filter((s) => s.pass === 2);
    expect(sessions.map((s) => [s.purpose, s.state])).toEqual([
      ["revise", "interrupted"],
      ["resume", "succeeded"],
    ]);
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
});
