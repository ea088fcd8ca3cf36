import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { median, REPS, seconds, verdict } from "./stats.ts";

const RUNS = 8;

/**
 * N runs started at once, as deployed (Octokit throttling on, LISA_CONCURRENCY=8), with a
 * near-instant agent: seconds from labeling until every run waits for review, for 8 issues in 8
 * repositories against 1, interleaved.
 */
export async function concurrentRuns(): Promise<void> {
  const agent = createFakeClaude([{ write: { "change.txt": "ok\n" }, manifest: { title: "Change", what: "Changes it." } }]);
  const env = await startEmulatedLisa({ claudeBinary: agent.binary, deployed: true, concurrency: RUNS });
  const { github, lisa } = env;
  try {
    const repos = Array.from({ length: RUNS }, (_, i) => `bench/service-${i + 1}`);
    for (const repo of repos) {
      await github.createRepo(repo, {
        files: { "README.md": "# Service\n" },
        config: "label: lisa\ngates:\n  - test -f change.txt\n",
      });
      github.addCollaborator(repo, "alice", "write");
    }
    const batch = async (count: number, rep: number) => {
      const issues: { repo: string; number: number }[] = [];
      for (const repo of repos.slice(0, count)) {
        const { number } = await github.createIssue(repo, { title: `Change ${rep}`, user: "alice" });
        issues.push({ repo, number });
      }
      const started = performance.now();
      await Promise.all(issues.map((issue) => github.labelIssue(issue.repo, issue.number, "lisa", "alice")));
      const inReview = async () => {
        for (const issue of issues) {
          const [owner = "", repo = ""] = issue.repo.split("/");
          if ((await lisa.store.runs.latestFor(owner, repo, issue.number))?.state !== "review") return false;
        }
        return true;
      };
      await waitFor(`${count} runs to reach review`, inReview, 600_000);
      const elapsed = performance.now() - started;
      await env.settle();
      return elapsed;
    };
    await batch(1, 0); // warms the mirror of the first repository and Lisa's code paths
    const one: number[] = [];
    const all: number[] = [];
    for (let rep = 1; rep <= REPS; rep++) {
      one.push(await batch(1, rep));
      all.push(await batch(RUNS, rep));
    }
    const ratio = median(all) / median(one);
    console.log(
      `${RUNS} runs at once as deployed, near-instant agent, median of ${REPS}: 1 run ${seconds(median(one))}, ${RUNS} runs ${seconds(median(all))}, ${ratio.toFixed(2)}× (goal < 2×: ${verdict(ratio < 2)})`,
    );
  } finally {
    await env.stop();
  }
}
