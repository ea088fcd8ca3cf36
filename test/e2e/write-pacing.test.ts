import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { LANES } from "../../src/github/write-pacer.ts";
import { Store } from "../../src/store/store.ts";

// Lisa as deployed paces an installation's writes through the store (issue 23): 1 s apart, as
// GitHub asks, not Octokit's 3 s between writes that notify people.

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("write pacing as deployed", () => {
  it("asks for review right after the review package that follows the pull request, nothing else between", async () => {
    const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add it", what: "Adds it." } }]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary, deployed: true });
    const { github } = env;
    await github.createRepo("acme/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("acme/api", "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    const writes: string[] = [];
    github.beforeAnswer((request) => {
      // Token requests are the App's, not the installation's writes.
      if (request.method !== "GET" && !request.path.startsWith("/app/")) writes.push(`${request.method} ${request.path}`);
    });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await env.settle();

    const index = (pattern: RegExp) => writes.findIndex((write) => pattern.test(write));
    const opened = index(/^POST \/repos\/acme\/api\/pulls$/);
    const asked = index(/^POST \/repos\/acme\/api\/pulls\/\d+\/requested_reviewers$/);
    // Only the review package goes between them (not the check run, which once went first); how
    // soon the request follows is the bench's to measure, not a stopwatch's here.
    expect(opened).toBeGreaterThanOrEqual(0);
    expect(writes.slice(opened + 1, asked)).toEqual([expect.stringMatching(/^POST \/repos\/acme\/api\/issues\/\d+\/comments$/)]);
  }, 60_000);

  it("says on the tracking comment that a write waits on GitHub's content limit, and when it goes out", async () => {
    const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add it", what: "Adds it." } }]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary, deployed: true });
    const { github, dataDir } = env;
    await github.createRepo("acme/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("acme/api", "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    // Another process's 497 creations fill the installation's hour but for the run's first three
    // (the 👀, its label, the tracking comment); the first of them leaves the hour 45 s from now, so
    // the pull request waits that long. Made on an hour-old clock, 1 s apart (no minute fills).
    let clock = Date.now() - 3_600_000 + 45_000;
    const other = new Store(testStoreLocation(dataDir), () => clock);
    for (let i = 0; i < 497; i++, clock += 1_000) {
      await other.writeSlots.reserve({ installationId: 1, creates: true, lane: LANES.indexOf("normal"), horizonMs: 0 });
    }
    await other.close();
    const edits: string[] = [];
    github.beforeAnswer((request, bodies) => {
      if (request.method === "PATCH" && request.path.startsWith("/repos/acme/api/issues/comments/"))
        edits.push((bodies.request as { body: string }).body);
    });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await env.settle();

    expect(edits.join("\n")).toMatch(
      /> Waiting for GitHub's content limit: \d+ writes this hour; the next goes out at \d\d:\d\d:\d\d UTC\./,
    );
    // Once the write went out, the comment no longer says so.
    expect(edits.at(-1)).not.toContain("Waiting for GitHub's content limit");
  }, 150_000);
});
