import { expect } from "vitest";
import { RUN_STATES } from "../../../src/store/transitions.ts";
import { type Breach, HELD, type HostileGroup } from "./hostile-input.ts";
import { inWorld, type LisaWorld, lastPayload, SMALL_CHANGE, startWorld } from "./lisa-world.ts";

// Webhooks that look like triggers but are not, or are the same trigger again: each may start at
// most what one honest gesture starts, and answer at most once.

let world: LisaWorld;
/** A repository whose issue has had its run, and the label webhook that started it. */
let repo: string;
let labeled: Record<string, unknown>;

const runs = async () => (await world.env.lisa.store.runs.inState(...RUN_STATES)).length;

/** What `act` started beyond nothing: runs, agent sessions and comments by Lisa. */
async function startedBy(act: () => Promise<unknown>, w: LisaWorld = world, where?: { repo: string; number: number }) {
  const before = {
    runs: await runs(),
    sessions: w.agent.calls().length,
    comments: where ? w.lisaComments(where.repo, where.number).length : 0,
  };
  await act();
  await w.env.settle();
  return {
    runs: (await w.env.lisa.store.runs.inState(...RUN_STATES)).length - before.runs,
    sessions: w.agent.calls().length - before.sessions,
    comments: where ? w.lisaComments(where.repo, where.number).length - before.comments : 0,
  };
}

const nothingStarted = (started: { runs: number; sessions: number }): Breach => ({
  ...HELD,
  unauthorizedRuns: started.runs + started.sessions,
});

export const triggersGroup: HostileGroup = {
  name: "triggers",
  async setup() {
    world = await startWorld();
    repo = await world.repo("triggers");
    await world.labeledIssue(repo);
    labeled = lastPayload(world, "issues", "labeled");
  },
  async teardown() {
    await world?.stop();
  },
  inputs: [
    {
      name: "labeled-pull-request",
      attempt: "a signed issues.labeled whose issue is Lisa's own pull request",
      run: async () => {
        const [pull] = world.env.github.pulls(repo);
        const payload = structuredClone(labeled) as { issue: Record<string, unknown> };
        payload.issue.number = pull?.number;
        payload.issue.pull_request = { url: pull?.url, html_url: pull?.html_url };
        payload.issue.updated_at = new Date().toISOString();
        let status = 0;
        const started = await startedBy(async () => {
          status = await world.post("issues", payload);
        });
        // Lisa answers GitHub (2xx) and starts nothing: a refusal would be retried by GitHub, and prove nothing.
        expect(status).toBeLessThan(300);
        return nothingStarted(started);
      },
    },
    {
      name: "label-under-new-ids",
      attempt: "the label event of a finished run sent again under three new delivery ids",
      run: async () => {
        const number = (labeled.issue as { number: number }).number;
        const started = await startedBy(
          async () => {
            for (let i = 0; i < 3; i++) await world.post("issues", labeled);
          },
          world,
          { repo, number },
        );
        // Stored once per event: no run, and not even a reply that a run is open.
        return { ...nothingStarted(started), unbounded: started.comments };
      },
    },
    {
      name: "same-delivery-twice",
      attempt: "a /lisa status comment delivered twice under one GUID",
      run: async () => {
        const number = (labeled.issue as { number: number }).number;
        const started = await startedBy(
          async () => {
            const delivery = await world.env.github.commentOnIssue(repo, number, "/lisa status", "ann");
            await world.env.github.redeliver(delivery.id);
          },
          world,
          { repo, number },
        );
        return { ...nothingStarted(started), unbounded: Math.max(0, started.comments - 1) };
      },
    },
    {
      name: "command-in-code-block",
      attempt: "/lisa accept quoted in a fenced code block of a writer's comment",
      run: async () => {
        const number = (labeled.issue as { number: number }).number;
        await world.env.github.commentOnIssue(repo, number, "Someone wrote:\n```\n/lisa accept\n```\nDo not do that yet.", "ann");
        await world.env.settle();
        const run = await world.env.lisa.store.runs.latestFor(repo.split("/")[0] ?? "", repo.split("/")[1] ?? "", number);
        return { ...HELD, unauthorizedRuns: run?.state === "review" ? 0 : 1 };
      },
    },
    {
      name: "edited-comment",
      attempt: "an old comment edited to say /lisa accept (GitHub sends issue_comment.edited)",
      run: async () => {
        const number = (labeled.issue as { number: number }).number;
        await world.env.github.commentOnIssue(repo, number, "Looks good.", "ann");
        const payload = lastPayload(world, "issue_comment", "created") as {
          action: string;
          comment: { body: string };
          changes?: unknown;
        };
        payload.action = "edited";
        payload.changes = { body: { from: payload.comment.body } };
        payload.comment.body = "/lisa accept";
        await world.post("issue_comment", payload);
        const run = await world.env.lisa.store.runs.latestFor(repo.split("/")[0] ?? "", repo.split("/")[1] ?? "", number);
        return { ...HELD, unauthorizedRuns: run?.state === "review" ? 0 : 1 };
      },
    },
    {
      name: "retry-flood",
      attempt: "100 concurrent /lisa retry comments on a failed run",
      run: async () => {
        // A world of its own: its agent crashes once, so the run fails, then works.
        return inWorld(
          async (flood) => {
            const floodRepo = await flood.repo("flood");
            const number = await flood.labeledIssue(floodRepo);
            const started = await startedBy(
              () =>
                Promise.all(
                  Array.from({ length: 100 }, () => flood.env.github.commentOnIssue(floodRepo, number, "/lisa retry", "ann")),
                ),
              flood,
              { repo: floodRepo, number },
            );
            const replies = flood.lisaComments(floodRepo, number).filter((body) => /nothing to retry|already/i.test(body)).length;
            // One retry is what was asked: one more session, and no answer to each of the other 99.
            return { ...HELD, unauthorizedRuns: Math.max(0, started.sessions - 1), unbounded: replies };
          },
          [{ crash: true }, SMALL_CHANGE],
        );
      },
    },
  ],
};
