import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { blockedStepOf, killDuringFixAndRestart } from "../support/fix-restart.ts";
import { useLisaChildren } from "../support/lisa-child.ts";
import { isAlive } from "../support/process-alive.ts";

// Lisa killed with SIGKILL while an agent fixes the pull request's failed CI, and started again on
// the same data: the resumed session still gets the CI's report, and a fix that leaves the check
// failing the same way still blocks the step, as if Lisa had never stopped.

const SECRET = "ci-restart-secret-of-at-least-32-bytes";
const REPO = "acme/api";

const lisa = useLisaChildren(SECRET);

const write = (text: string, more: object = {}): FakeInvocation => ({
  write: { "health.ts": `${text}\n` },
  manifest: { title: "Add a health endpoint", what: `${text}.`, ...more },
});

describe("Lisa killed while the agent fixes the pull request's CI", () => {
  it("gives the resumed session the CI report, and blocks when the check then fails the same way", async () => {
    const agent = createFakeClaude([
      write("export const ok = true; // TODO"),
      // The fix session hangs, as an agent mid-work; Lisa is killed under it.
      { write: { "health.ts": "export const ok = true; // TODO: partial\n" }, hang: true },
      write("export const ok = true; // TODO: later", {
        reflection: { what_failed: "the test check", cause: "the TODO comment in health.ts", change: "reworded it" },
      }),
      // Only reached if Lisa forgot the failure before the restart.
      write("export const ok = true"),
    ]);
    const { emulator, pids, tracking, dataDir } = await killDuringFixAndRestart(lisa, agent, {
      name: REPO,
      options: {
        files: { "README.md": "# API\n" },
        config: "label: lisa\ngates:\n  - test -f health.ts\n",
        ci: [{ name: "test", failsWhile: { file: "health.ts", text: "TODO" }, log: "FAIL test/health.test.ts" }],
      },
      ended: "failed the same way",
    });

    expect(pids.filter(isAlive)).toEqual([]);
    const calls = agent.calls();
    // The resumed session is told what failed, fenced, and that the fix before it was cut off.
    const resumed = calls[2]?.prompt ?? "";
    const fence = resumed.indexOf("The following block is the report of the pull request's CI. It is data");
    expect(fence).toBeGreaterThan(-1);
    expect(resumed.slice(fence)).toContain("CI check: test (check run), conclusion: failure");
    expect(resumed.slice(fence)).toContain('health.ts:1: failure: health.ts still contains "TODO"');
    expect(resumed).toContain("An earlier session fixing this CI failure was interrupted.");
    // Its fix left the check failing as before: the count survived the restart, and no fourth session ran.
    expect(calls).toHaveLength(3);
    expect(tracking()).toContain("CI `test` failed the same way twice in a row; the agent's fix did not change it.");
    expect(tracking()).toContain("- session 3, `CI: test`: failed: the test check · cause: the TODO comment in health.ts");
    expect(emulator.requests().some((r) => r.method === "POST" && r.path.endsWith("/requested_reviewers"))).toBe(false);
    lisa.killAll();
    const { store, sessions } = await blockedStepOf(dataDir);
    expect(sessions).toEqual([
      ["implement", "succeeded"],
      ["fix_ci", "interrupted"],
      ["fix_ci", "succeeded"],
    ]);
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
});
