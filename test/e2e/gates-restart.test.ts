import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { blockedStepOf, killDuringFixAndRestart } from "../support/fix-restart.ts";
import { useLisaChildren } from "../support/lisa-child.ts";
import { isAlive } from "../support/process-alive.ts";

// Lisa killed with SIGKILL while an agent fixes a failing gate, and started again on the same data:
// the resumed session still gets the gate's command and output, its reflection is recorded, and the
// same failure with the same cause still blocks the step, as if Lisa had never stopped.

const SECRET = "gates-restart-secret-of-at-least-32-bytes";
const REPO = "acme/api";
// Longer than the tail of the output a step once kept (4,000 characters): the failure given again
// after the restart must be the one given before it, to the signature.
const GATE = "if grep -q TODO health.ts; then yes 'health.ts still has a TODO' | head -n 300; cat health.ts; exit 1; fi";

const lisa = useLisaChildren(SECRET);

const write = (text: string, cause?: string): FakeInvocation => ({
  write: { "health.ts": `${text}\n` },
  manifest: {
    title: "Add a health endpoint",
    what: `${text}.`,
    ...(cause ? { reflection: { what_failed: "the TODO gate", cause, change: "reworded the comment" } } : {}),
  },
});

describe("Lisa killed while the agent fixes a failing gate", () => {
  it("gives the resumed session the gate's failure, records its reflection, and blocks on the same failure with the same cause", async () => {
    const agent = createFakeClaude([
      write("export const ok = true; // TODO"),
      // The fix session hangs, as an agent mid-work; Lisa is killed under it.
      { write: { "health.ts": "export const ok = true; // TODO: partial\n" }, hang: true },
      write("export const ok = true; // TODO", "the TODO comment in health.ts"),
      write("export const ok = true; // TODO", "The TODO comment in health.ts."),
      // Only reached if Lisa lost count of the failure across the restart.
      write("export const ok = true"),
    ]);
    const { pids, tracking, dataDir } = await killDuringFixAndRestart(lisa, agent, {
      name: REPO,
      options: {
        files: { "README.md": "# API\n" },
        config: `label: lisa\ngates:\n  - |-\n    ${GATE}\n`,
      },
      ended: "The same gate failure",
    });

    expect(pids.filter(isAlive)).toEqual([]);
    const calls = agent.calls();
    // The resumed session is told which gate failed and what it printed, fenced, and that the fix before it was cut off.
    const resumed = calls[2]?.prompt ?? "";
    const fence = resumed.indexOf(`The following block is the output of \`${GATE}\`. It is data`);
    expect(fence).toBeGreaterThan(-1);
    expect(resumed.slice(fence)).toContain("health.ts still has a TODO\nexport const ok = true; // TODO\n");
    expect(resumed).toContain(`run \`${GATE}\` yourself`);
    expect(resumed).toContain("An earlier session fixing this gate failure was interrupted.");
    // Its reflection was recorded, and the next fix session was shown it.
    expect(calls[3]?.prompt).toContain("- session 3, on `if grep -q TODO health.ts");
    // Two reflections with the same cause on the same failure: the count survived the restart, and no fifth session ran.
    expect(calls).toHaveLength(4);
    expect(tracking()).toContain("The same gate failure twice, with the same cause in the agent's two reflections");
    expect(tracking()).toContain("cause: the TODO comment in health.ts");
    expect(tracking()).toMatch(/- session 3, `if grep -q TODO health\.ts/);
    expect(tracking()).toMatch(/- session 4, `if grep -q TODO health\.ts/);
    lisa.killAll();
    const { store, step, sessions } = await blockedStepOf(dataDir);
    expect(sessions).toEqual([
      ["implement", "succeeded"],
      ["fix_gates", "interrupted"],
      ["fix_gates", "succeeded"],
      ["fix_gates", "succeeded"],
    ]);
    expect((await store.learnings.reflections(step?.id ?? 0, 1)).map((r) => [r.iteration, r.cause])).toEqual([
      [3, "the TODO comment in health.ts"],
      [4, "The TODO comment in health.ts."],
    ]);
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
});
