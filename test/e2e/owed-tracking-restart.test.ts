import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { useLisaChildren } from "../support/lisa-child.ts";
import { trackingBody } from "../support/tracking-body.ts";

// A tracking comment edit GitHub refused is owed in the store, not only in memory: Lisa killed
// before GitHub takes it, the next Lisa on the same data writes it as it starts (issue 10). The
// run here ends blocked: a run in review would have its comment written anyway, when the next
// Lisa reads its review gate at start-up.

const SECRET = "owed-tracking-secret-of-at-least-32-bytes";
const REPO = "acme/api";
const lisa = useLisaChildren(SECRET);

describe("a tracking comment edit owed when Lisa is killed", () => {
  it("is written by the next process on the same data, so the issue does not say Working over a blocked run", async () => {
    // The gate wants a file the agent never writes: one session, then the step is blocked.
    const agent = createFakeClaude([{ write: { "other.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } }]);
    const emulator = await lisa.emulator();
    await emulator.createRepo(REPO, {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\nlimits:\n  max_iterations: 1\n",
    });
    emulator.addCollaborator(REPO, "ann", "write");
    const dataDir = path.join(tempDir("owed-data"), "lisa");
    const first = await lisa.start({ dataDir, claudeBinary: agent.binary });
    // Every edit of a comment is refused while the first process lives, its run's last one included.
    emulator.injectFault({ method: "PATCH", path: /\/issues\/comments\/\d+$/, kind: "secondary_rate_limit", times: 1_000 });
    const issue = await emulator.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    await emulator.labelIssue(REPO, issue.number, "lisa", "ann");

    const store = new Store(testStoreLocation(dataDir));
    try {
      await waitFor("the run to be blocked", async () => (await store.runs.inState("blocked")).length === 1, 60_000);
      await waitFor(
        "the refused edit to be recorded as owed",
        async () => (await store.runs.owingTracking()).length === 1,
        10_000,
      );
      const tracking = () => trackingBody(emulator, REPO, issue.number);
      expect(tracking()).not.toContain("⛔ Blocked");

      first.kill("SIGKILL");
      await new Promise((resolve) => first.once("exit", resolve));
      emulator.clearFaults();
      await lisa.start({ dataDir, claudeBinary: agent.binary });
      await waitFor("the tracking comment to show the run blocked", () => tracking().includes("⛔ Blocked"), 15_000);
      await waitFor("the debt to be cleared", async () => (await store.runs.owingTracking()).length === 0, 5_000);
    } finally {
      await store.close();
    }
  });
});
