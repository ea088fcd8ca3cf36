import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { trackingBody } from "../support/tracking-body.ts";
import { inWorld } from "./hostile/lisa-world.ts";
import { committingAs, forgeCommandRow, PLANTED, remoteCommits, STRANGER, toolResult } from "./hostile/publication.ts";

// The publication group's inputs (hostile/publication.ts) with their defences off: Lisa pushes the
// agent's commits as they are, and a failure reason quotes what the CLI left behind. Every attack
// then gets through, so none of those inputs holds merely because it could not have.

vi.mock("../../src/workflow/step/own-commits.ts", () => ({ ownCommits: async () => 0 }));
vi.mock("../../src/workflow/context/session-failure.ts", () => ({
  sessionFailure: (session: string, failure: { kind: string; message: string; detail?: string } | undefined) =>
    `${session} failed (${failure?.kind}): ${failure?.message}; its last words: ${failure?.detail?.trim().split("\n").at(-1)}`,
}));

describe("publication attacks with the defences off (the controls)", () => {
  it("an agent's commits reach the remote with its credits, sign-offs, foreign closing keywords and identity", async () => {
    await inWorld(
      async (world) => {
        const repo = await world.repo("publication");
        await world.labeledIssue(repo);
        const { messages, identities } = remoteCommits(world, repo);
        for (const line of PLANTED) expect(messages).toContain(line);
        expect(identities.filter((identity) => identity.includes(STRANGER.email))).toHaveLength(2);
      },
      [committingAs(STRANGER, PLANTED)],
    );
  });

  it("a CLI killed by a signal hands Lisa the tool result it streamed, password and all", async () => {
    const password = `hunter2-${randomUUID()}`;
    await inWorld(
      async (world) => {
        const repo = await world.repo("publication");
        const issue = await world.labeledIssue(repo);
        expect(trackingBody(world.env.github, repo, issue)).toContain(password);
      },
      [{ crash: true, signal: "SIGKILL", stdout: toolResult(password) }],
    );
  });

  it("a command row inserted with the MAC Lisa would write runs like a labeled issue", async () => {
    expect(await forgeCommandRow("valid")).toEqual({ ran: true, counted: 0, outcome: expect.stringMatching(/^queued run \d+/) });
  });
});
