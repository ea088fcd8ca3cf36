import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";

// Lisa as deployed paces an installation's writes through the store (issue 23): 1 s apart, as
// GitHub asks, not Octokit's 3 s between writes that notify people.

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("write pacing as deployed", () => {
  it("asks for review about 3 s after opening the pull request: three writes 1 s apart", async () => {
    const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add it", what: "Adds it." } }]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary, deployed: true });
    const { github } = env;
    await github.createRepo("acme/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("acme/api", "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", user: "ann" });
    const writes: { what: string; at: number }[] = [];
    github.beforeAnswer((request) => {
      // Token requests are the App's, not the installation's writes.
      if (request.method !== "GET" && !request.path.startsWith("/app/"))
        writes.push({ what: `${request.method} ${request.path}`, at: Date.now() });
    });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await env.settle();

    const at = (pattern: RegExp) => writes.find((write) => pattern.test(write.what))?.at ?? Number.NaN;
    const opened = at(/^POST \/repos\/acme\/api\/pulls$/);
    const asked = at(/^POST \/repos\/acme\/api\/pulls\/\d+\/requested_reviewers$/);
    // The review package and the check run go between them, each a slot 1 s after the last: 3 s,
    // against 6 s and more when Octokit held writes that notify people 3 s apart.
    expect(asked - opened).toBeLessThan(4_500);
  }, 60_000);
});
