import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EMULATED_WEBHOOK_SECRET } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { lisaChildIdle, startLisaChild } from "../../dev/lisa-process.ts";
import { tempDir } from "../../dev/temp-dir.ts";
import { createGitHubEmulator, type GitHubEmulator, type RecordedRequest } from "../../emulator/github-emulator.ts";

// Eight runs of one installation share its one-write-a-second lane (issue 38). What each issue
// shows must never contradict its pull request, whatever order the lane puts their writes in:
// checked on the emulator's log of requests, not with a stopwatch.

const RUNS = 8;
/**
 * The emulator runs in the test's process and Lisa in its own, as GitHub and Lisa are apart: a
 * request is stamped when the test's event loop gets to it, a few milliseconds after its bytes
 * came. Sharing Lisa's loop, eight runs' work delayed a stamp by 66 ms (two 👀 934 ms apart, the
 * first late) on a loaded two-core CI; a write sent after the minting of a token (the pacer once
 * waited before it) came 145 ms early, and is still caught.
 */
const STAMP_ALLOWANCE_MS = 50;
const REPO = "acme/api";

let github: GitHubEmulator | undefined;
let lisa: ChildProcess | undefined;
afterEach(async () => {
  lisa?.kill("SIGKILL");
  lisa = undefined;
  await github?.stop();
  github = undefined;
});

interface Write {
  request: RecordedRequest;
  sent: unknown;
}

/** The labels each write leaves on its issue, replayed from the log in the order GitHub took them. */
function labelHistory(writes: readonly Write[]) {
  const labels = new Map<number, Set<string>>();
  const moments: { issue: number; labels: string[]; index: number }[] = [];
  writes.forEach(({ request, sent }, index) => {
    const match = /^\/repos\/acme\/api\/issues\/(\d+)\/labels(?:\/(.+))?$/.exec(request.path);
    if (!match) return;
    const issue = Number(match[1]);
    const now = labels.get(issue) ?? new Set<string>();
    const named = (sent as { labels?: string[] } | undefined)?.labels ?? [];
    if (request.method === "PUT") now.clear();
    if (request.method === "DELETE") now.delete(match[2] ?? "");
    else for (const label of named) now.add(label);
    labels.set(issue, now);
    moments.push({ issue, labels: [...now], index });
  });
  return moments;
}

describe("the write lane with eight runs of one installation", () => {
  it("never shows an issue as working once its pull request asked for review, and keeps every write 1 s from the last", async () => {
    const agent = createFakeClaude(
      Array.from({ length: RUNS }, (_, i) => ({
        write: { [`part-${i}.ts`]: "ok\n" },
        manifest: { title: `Add part ${i}`, what: "Adds it." },
      })),
    );
    github = createGitHubEmulator({ reposRoot: tempDir("write-lane-repos"), webhookSecret: EMULATED_WEBHOOK_SECRET });
    await github.start();
    const child = await startLisaChild(github, {
      dataDir: path.join(tempDir("write-lane-data"), "lisa"),
      claudeBinary: agent.binary,
      secret: EMULATED_WEBHOOK_SECRET,
      deployed: true,
      concurrency: 4,
    });
    lisa = child;
    await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: 'label: lisa\ngates:\n  - "true"\n' });
    github.addCollaborator(REPO, "ann", "write");
    const writes: Write[] = [];
    github.beforeAnswer((request, bodies) => {
      // Token requests are the App's, not the installation's writes.
      if (request.method !== "GET" && !request.path.startsWith("/app/")) writes.push({ request, sent: bodies.request });
    });
    const issues = [];
    for (let i = 0; i < RUNS; i++) issues.push(await github.createIssue(REPO, { title: `Add part ${i}`, user: "ann" }));
    await Promise.all(issues.map((issue) => github?.labelIssue(REPO, issue.number, "lisa", "ann")));
    await lisaChildIdle(child.port, 240_000);

    const pulls = github.pulls(REPO);
    expect(pulls).toHaveLength(RUNS);
    const issueOfPull = new Map(pulls.map((pull) => [pull.number, Number(/^lisa\/(\d+)-/.exec(pull.head.ref)?.[1])]));
    // In the order GitHub took them: the log is in answer order, and a write waits for its slot before it is sent.
    writes.sort((a, b) => a.request.arrivedAt - b.request.arrivedAt);
    const askedAt = new Map<number, number>();
    writes.forEach(({ request }, index) => {
      const asked = /^\/repos\/acme\/api\/pulls\/(\d+)\/requested_reviewers$/.exec(request.path);
      const issue = asked && issueOfPull.get(Number(asked[1]));
      if (issue && !askedAt.has(issue)) askedAt.set(issue, index);
    });
    expect(askedAt.size).toBe(RUNS);
    const contradictions = labelHistory(writes)
      .filter(({ issue, index }) => index > (askedAt.get(issue) ?? Number.POSITIVE_INFINITY))
      .filter(({ labels }) => labels.includes("lisa:working"))
      .map(
        ({ issue, index }) => `#${issue} labeled working at write ${index}, after its review request at ${askedAt.get(issue)}`,
      );
    expect(contradictions).toEqual([]);
    // Each issue ends showing the review its pull request waits for.
    for (const issue of issues) expect(github.labels(REPO, issue.number)).toContain("lisa:review");

    const gaps = writes.slice(1).map((write, i) => write.request.arrivedAt - (writes[i]?.request.arrivedAt ?? 0));
    expect(
      gaps.flatMap((gap, i) =>
        gap < 1_000 - STAMP_ALLOWANCE_MS
          ? [
              `${writes[i]?.request.method} ${writes[i]?.request.path} → ${writes[i + 1]?.request.method} ${writes[i + 1]?.request.path}: ${Math.round(gap)} ms`,
            ]
          : [],
      ),
    ).toEqual([]);
  }, 300_000);
});
