import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { median, REPS, seconds, verdict } from "./stats.ts";

const RUNS = 8;
const REPO = "bench/app";

/**
 * Lisa as deployed (writes paced through the store): the 👀 on a `lisa` label while she is idle,
 * then the 👀 on one sent while 8 runs of the same installation write their pull requests, review
 * requests, labels and tracking edits; and how many of the installation's writes went out between
 * that label and its 👀.
 */
async function once(): Promise<{ idleMs: number; busyMs: number; ahead: number }> {
  const agent = createFakeClaude(
    Array.from({ length: RUNS + 1 }, (_, i) => ({
      write: { [`part-${i}.ts`]: "ok\n" },
      manifest: { title: `Part ${i}`, what: "Adds it." },
    })),
  );
  const env = await startEmulatedLisa({ claudeBinary: agent.binary, deployed: true, concurrency: 4 });
  const { github } = env;
  try {
    await github.createRepo(REPO, { files: { "README.md": "# bench\n" }, config: 'label: lisa\ngates:\n  - "true"\n' });
    github.addCollaborator(REPO, "alice", "write");
    const eyes = async (number: number) => {
      const labeled = performance.now();
      await github.labelIssue(REPO, number, "lisa", "alice");
      await waitFor("the 👀 on the lisa label", () => github.reactions(REPO, number).length > 0, 120_000);
      return performance.now() - labeled;
    };
    const idle = await github.createIssue(REPO, { title: "Part 0", user: "alice" });
    const idleMs = await eyes(idle.number);
    await env.settle();
    const issues = [];
    for (let i = 1; i <= RUNS; i++) issues.push(await github.createIssue(REPO, { title: `Part ${i}`, user: "alice" }));
    const late = await github.createIssue(REPO, { title: "The late one", user: "alice" });
    await Promise.all(issues.map((issue) => github.labelIssue(REPO, issue.number, "lisa", "alice")));
    // Mid-flight: the first of the eight has opened its pull request, the rest are writing theirs.
    await waitFor("a pull request of the eight", () => github.pulls(REPO).length > 1, 120_000);
    const before = github.requests().length;
    const busyMs = await eyes(late.number);
    const ahead = github
      .requests()
      .slice(before)
      .filter((r) => r.method !== "GET" && !r.path.startsWith("/app/") && !r.path.endsWith("/reactions")).length;
    await env.settle();
    return { idleMs, busyMs, ahead };
  } finally {
    await env.stop();
  }
}

export async function eyesWhileWriting(): Promise<void> {
  const results = [];
  for (let i = 0; i < REPS; i++) results.push(await once());
  const idle = median(results.map((r) => r.idleMs));
  const busy = median(results.map((r) => r.busyMs));
  console.log(`👀 on a lisa label, as deployed, median of ${REPS}`);
  console.log(`  Lisa idle (baseline)                         ${seconds(idle)}`);
  console.log(
    `  while ${RUNS} runs of the installation write      ${seconds(busy)} (${(busy / idle).toFixed(2)}× idle; ` +
      `${median(results.map((r) => r.ahead))} of their writes went out between label and 👀; goal < 2 s: ${verdict(busy < 2_000)})\n`,
  );
}
