import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startScaledLisa } from "../../dev/scaled-lisa.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { Store } from "../../src/store/store.ts";
import { serviceIssues } from "./service-issues.ts";
import { freshSchema, verdict } from "./stats.ts";

const WORKERS = 3;
const ISSUES = 12;

/**
 * Content-creating requests (POSTs, write-pacer.ts) in the busiest minute of one installation while
 * 3 workers sharing PostgreSQL take 12 issues labeled at once to review, as deployed: every process
 * paces its writes through the store. GitHub's secondary limit is 80 a minute (issue 23).
 */
export async function busiestMinute(): Promise<void> {
  const agent = createFakeClaude([{ write: { "change.txt": "ok\n" }, manifest: { title: "Change", what: "Changes it." } }]);
  const databaseUrl = freshSchema("minute");
  const scaled = await startScaledLisa({ databaseUrl, workers: WORKERS, claudeBinary: agent.binary, deployed: true });
  const store = new Store(databaseUrl);
  const creates: number[] = [];
  try {
    const { github } = scaled;
    const issues = await serviceIssues(github, ISSUES);
    github.beforeAnswer((request) => {
      if (request.method === "POST" && !request.path.startsWith("/app/")) creates.push(Date.now());
    });
    const started = Date.now();
    await Promise.all(issues.map((issue) => github.labelIssue(issue.repo, issue.number, "lisa", "alice")));
    await waitFor(`${ISSUES} runs to reach review`, async () => (await store.runs.inState("review")).length === ISSUES, 900_000);
    const busiest = Math.max(0, ...creates.map((start) => creates.filter((t) => t >= start && t < start + 60_000).length));
    console.log(
      `Busiest minute, ${WORKERS} workers, ${ISSUES} issues labeled at once, as deployed: ${busiest} content-creating requests (of ${creates.length} in ${((Date.now() - started) / 1000).toFixed(0)} s); goal ≤ 80: ${verdict(busiest <= 80)}`,
    );
  } finally {
    await store.close();
    await scaled.stop();
  }
}
