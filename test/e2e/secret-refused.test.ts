import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { trackingBody } from "../support/tracking-body.ts";

// An agent writes a key Lisa holds into a file (its CLI's own, where Lisa cannot set it at its proxy,
// or one it found). Lisa refuses the push, says so without the value, and drops that work, so
// `/lisa retry` starts the agent again from what was published instead of hitting the same refusal for ever.

const REPO = "acme/api";
const KEY = `agents-own-model-key-${randomUUID()}`;

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("a push refused for a secret", () => {
  it("publishes nothing, says why, and lets /lisa retry run the agent again from the last published commit", async () => {
    const agent = createFakeClaude([
      {
        write: { "health.ts": "ok\n", "notes.txt": `${KEY}\n` },
        manifest: { title: "Add health", what: "Adds it." },
      },
      { write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } },
    ]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary, agentEnvSource: { ...process.env, ANTHROPIC_API_KEY: KEY } });
    const { github } = env;
    await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
    github.addCollaborator(REPO, "ann", "write");
    const issue = await github.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    await env.settle();

    const tracking = () => trackingBody(github, REPO, issue.number);
    expect(github.pulls(REPO)).toEqual([]);
    expect(tracking()).toMatch(
      /Lisa refused to push, so nothing was published: commit [0-9a-f]{7} adds a secret Lisa holds .* in `notes\.txt`/,
    );
    expect(tracking()).toContain("Lisa discarded that work; `/lisa retry` runs the agent again from the last published commit.");
    expect(tracking()).not.toContain(KEY);

    await github.commentOnIssue(REPO, issue.number, "/lisa retry", "ann");
    await env.settle();

    expect(agent.calls()).toHaveLength(2);
    const [pull] = github.pulls(REPO);
    expect(pull).toBeDefined();
    expect(await github.readFile(REPO, "health.ts", pull?.head.ref)).toBe("ok\n");
    expect(await github.readFile(REPO, "notes.txt", pull?.head.ref)).toBeUndefined();
  });
});
