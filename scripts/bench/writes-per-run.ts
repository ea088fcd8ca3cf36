import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";

/** Requests that change something on GitHub; minting an installation token is not one. */
const isWrite = (request: { method: string; path: string }) =>
  request.method !== "GET" && !request.path.endsWith("/access_tokens");

/** What each write is for, and which part of the product asks for it. */
const PURPOSE: Record<string, string> = {
  "POST /repos/:owner/:repo/issues/:number/reactions": "👀: Lisa heard (run)",
  "POST /repos/:owner/:repo/issues/:number/labels": "lisa:working (run)",
  "POST /repos/:owner/:repo/pulls": "the pull request (run)",
  "POST /repos/:owner/:repo/check-runs": "the Lisa check run on the head (check runs)",
  "POST /repos/:owner/:repo/pulls/:number/requested_reviewers": "asks the requester for review (review loop)",
  "PUT /repos/:owner/:repo/issues/:number/labels": "lisa:working → lisa:review (run)",
  "PATCH /repos/:owner/:repo/issues/comments/:id": "the tracking comment's final state (run)",
  "PATCH /repos/:owner/:repo/pulls/:number": "the PR's title or body (run)",
  "POST /graphql": "draft → ready for review (review loop)",
};
const purpose = (write: { method: string; path: string; route: string | null }, issue: number) => {
  // One route, two comments: the tracking comment on the issue, the review package on the PR.
  if (write.route === "/repos/:owner/:repo/issues/:number/comments")
    return write.path.includes(`/issues/${issue}/`) ? "the tracking comment (run)" : "the review package (review loop)";
  return PURPOSE[`${write.method} ${write.route}`] ?? "?";
};

/**
 * The writes of one run, label to review gate; `deployed`: paced through the store and throttled as
 * in production; `agentSeconds`: how long the agent works (near-instant by default).
 */
async function runWrites(deployed: boolean, agentSeconds = 0) {
  const agent = createFakeClaude([
    {
      write: { "health.ts": "ok\n" },
      manifest: { title: "Add health", what: "Adds it." },
      ...(agentSeconds ? { run: [`sleep ${agentSeconds}`] } : {}),
    },
  ]);
  const env: EmulatedLisa = await startEmulatedLisa({ claudeBinary: agent.binary, deployed });
  try {
    const { github } = env;
    await github.createRepo("bench/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("bench/api", "alice", "write");
    const issue = await github.createIssue("bench/api", { title: "Add a health endpoint", user: "alice" });
    const before = github.requests().length;
    let reviewAskedAt: number | undefined;
    github.beforeAnswer((request) => {
      if (request.route === "/repos/:owner/:repo/pulls/:number/requested_reviewers") reviewAskedAt ??= performance.now();
    });
    const started = performance.now();
    await github.labelIssue("bench/api", issue.number, "lisa", "alice");
    await env.settle();
    const seconds = (performance.now() - started) / 1000;
    // From the push of the reviewed head (the last before the review request) to the request.
    const pushedAt = github
      .pushTimes()
      .filter((at) => at < (reviewAskedAt ?? 0))
      .at(-1);
    const pushToReview = reviewAskedAt !== undefined && pushedAt !== undefined ? (reviewAskedAt - pushedAt) / 1000 : undefined;
    return { writes: github.requests().slice(before).filter(isWrite), issue: issue.number, seconds, pushToReview };
  } finally {
    await env.stop();
  }
}

export async function writesPerRun(): Promise<void> {
  // In-process tests pace nothing; as deployed the run takes longer, and a tracking edit can fall due on the way.
  for (const deployed of [false, true]) {
    const { writes, issue, seconds } = await runWrites(deployed);
    const how = deployed ? "as deployed (paced, throttled)" : "with pacing off";
    console.log(
      `GitHub writes of a single-repository run, label to review gate, ${how}: ${writes.length} in ${seconds.toFixed(1)} s (goal ≤ 8: ${writes.length <= 8 ? "met" : "missed"})`,
    );
    for (const write of writes) console.log(`  ${write.method} ${write.path} → ${write.status}: ${purpose(write, issue)}`);
  }
  // A near-instant agent pushes while the run's first writes (👀, label, tracking comment) still wait
  // their paced turn; an agent that works a few seconds, as any does, shows the push's own path.
  const { pushToReview } = await runWrites(true, 4);
  const review =
    pushToReview === undefined
      ? "not seen"
      : `${pushToReview.toFixed(2)} s (goal ≤ 3 s: ${pushToReview <= 3 ? "met" : "missed"})`;
  console.log(`Push to review request as deployed (paced, throttled), an agent of 4 s: ${review}`);
}
