import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";

// Commands were handled one at a time, oldest first: one issue whose repository GitHub answered
// slowly held up every issue behind it (issue 23: a `lisa` label waited 24 s for its 👀 behind a
// flood). Now commands on different issues are handled at once.

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

const GITHUB_SLOW_MS = 6_000;

describe("commands on different issues", () => {
  it("are handled at once: a slow GitHub answer on one issue does not hold up another's 👀", async () => {
    const agent = createFakeClaude([
      { write: { "a.ts": "export const a = 1;\n" }, manifest: { title: "Add a", what: "Adds a." } },
      { write: { "b.ts": "export const b = 1;\n" }, manifest: { title: "Add b", what: "Adds b." } },
    ]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github } = env;
    for (const repo of ["acme/slow", "acme/fast"]) {
      await github.createRepo(repo, { files: { "README.md": "# R\n" }, config: "label: lisa\n" });
      github.addCollaborator(repo, "ann", "write");
    }
    const slow = await github.createIssue("acme/slow", { title: "Slow one", body: "", user: "ann" });
    const fast = await github.createIssue("acme/fast", { title: "Fast one", body: "", user: "ann" });
    // GitHub takes its time over the slow repository's first two reads: the config and the sender's role.
    github.injectFault({ method: "GET", path: /^\/repos\/acme\/slow\//, kind: "slow", delayMs: GITHUB_SLOW_MS, times: 2 });

    await github.labelIssue("acme/slow", slow.number, "lisa", "ann");
    await github.labelIssue("acme/fast", fast.number, "lisa", "ann");
    await github.waitForWebhooks();
    await env.settle();

    const log = github.requests().map((r) => `${r.method} ${r.path}`);
    const fastEyes = log.indexOf(`POST /repos/acme/fast/issues/${fast.number}/reactions`);
    const slowFirstAnswer = log.findIndex((line) => line.startsWith("GET /repos/acme/slow/"));
    expect(fastEyes, "the fast issue's 👀").toBeGreaterThanOrEqual(0);
    expect(slowFirstAnswer, "GitHub's first answer about the slow repository").toBeGreaterThanOrEqual(0);
    expect(fastEyes, "the fast issue's 👀 came before GitHub answered the slow repository's first read").toBeLessThan(
      slowFirstAnswer,
    );
    // Both still ran to their pull requests.
    expect(github.pulls("acme/slow")).toHaveLength(1);
    expect(github.pulls("acme/fast")).toHaveLength(1);
  }, 120_000);
});
