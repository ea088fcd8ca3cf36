import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { trackingBody } from "../support/tracking-body.ts";

// Lisa scaled out as the README's "Running at scale" describes it: one `lisa web` and three
// `lisa worker` processes sharing PostgreSQL, each worker with its own data directory (mirrors and
// worktrees). Twelve issues in three repositories are labeled at once; one worker is SIGKILLed
// while its agent works, and another takes its run over once the claim's lease lapses.

const SECRET = "scale-out-secret-of-at-least-32-bytes";
const REPOS = ["acme/api", "acme/web", "acme/docs"];
let baseUrl = "";
beforeAll(async () => {
  baseUrl = await requirePostgres();
});

const children: ChildProcess[] = [];
let github: GitHubEmulator | undefined;
const orphans: number[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const pid of orphans.splice(0)) killQuietly(pid);
  await github?.stop();
});

describe("lisa web and three lisa workers on PostgreSQL", () => {
  it("deliver 12 issues once each, and a run whose worker is killed mid-session is taken over and finishes once", async () => {
    // The first agent session hangs until its worker is killed; every later one finishes at once.
    const agent = createFakeClaude([
      { write: { "lost.txt": "never pushed\n" }, hang: true },
      { write: { "change.txt": "done\n" }, manifest: { title: "Make the change", what: "Makes it." } },
    ]);
    github = createGitHubEmulator({ reposRoot: tempDir("scale-repos"), webhookSecret: SECRET });
    await github.start();
    for (const repo of REPOS) {
      await github.createRepo(repo, {
        files: { "README.md": `# ${repo}\n` },
        config: "label: lisa\ngates:\n  - test -f change.txt\n",
      });
      github.addCollaborator(repo, "ann", "write");
    }
    const url = new URL(baseUrl);
    url.searchParams.set("schema", `scale_${randomUUID().replaceAll("-", "").slice(0, 12)}`);
    const databaseUrl = url.toString();

    const logs = process.env.LISA_SCALE_LOGS ?? tempDir("scale-logs");
    const workers = new Map<string, { child: ChildProcess; dataDir: string }>();
    for (const name of ["w1", "w2", "w3"]) {
      const dataDir = path.join(tempDir(`scale-${name}`), "lisa");
      const child = await startLisaChild(github, {
        dataDir,
        claudeBinary: agent.binary,
        secret: SECRET,
        databaseUrl,
        role: "worker",
        workerName: name,
        leaseSeconds: 10,
        concurrency: 2,
        receivesWebhooks: false,
        logFile: path.join(logs, `${name}.log`),
      });
      children.push(child);
      workers.set(name, { child, dataDir });
    }
    const web = await startLisaChild(github, {
      dataDir: path.join(tempDir("scale-web"), "lisa"),
      claudeBinary: agent.binary,
      secret: SECRET,
      databaseUrl,
      role: "web",
      logFile: path.join(logs, "web.log"),
    });
    children.push(web);

    const issues: { repo: string; number: number }[] = [];
    for (let i = 0; i < 12; i++) {
      const repo = REPOS[i % REPOS.length] as string;
      const issue = await github.createIssue(repo, { title: `Change number ${i + 1}`, body: "", user: "ann" });
      issues.push({ repo, number: issue.number });
    }
    await Promise.all(issues.map((issue) => github?.labelIssue(issue.repo, issue.number, "lisa", "ann")));

    // The hanging session's worktree is under its worker's data directory: that worker is killed.
    const pids = await waitFor("the first agent session to hang", () => agent.hangingPids(), 60_000);
    orphans.push(...pids);
    const hungIn = agent.calls()[0]?.cwd ?? "";
    const [victim] = [...workers].find(([, worker]) => hungIn.startsWith(worker.dataDir)) ?? [];
    expect(victim, `the hanging session ran in ${hungIn}`).toBeDefined();
    workers.get(victim as string)?.child.kill("SIGKILL");

    const store = new Store(databaseUrl);
    try {
      await waitFor(
        "all 12 runs to reach review",
        async () => (await store.runs.inState("review")).length === 12 || undefined,
        180_000,
      );
      // The tracking comments are edited after the state changes (coalesced, off the critical path).
      const trackingOf = (issue: { repo: string; number: number }) =>
        github ? trackingBody(github, issue.repo, issue.number) : "";
      await waitFor("every tracking comment to say so", () => issues.every((i) => trackingOf(i).includes("Ready for review")));
      await github.waitForWebhooks();

      // Twelve pull requests, one per issue, and one tracking comment per issue.
      const pulls = REPOS.flatMap((repo) => github?.pulls(repo).map((pull) => ({ repo, ...pull })) ?? []);
      expect(pulls).toHaveLength(12);
      for (const issue of issues) {
        const closing = pulls.filter((pull) => pull.repo === issue.repo && pull.head.ref.startsWith(`lisa/${issue.number}-`));
        expect(closing, `${issue.repo}#${issue.number}`).toHaveLength(1);
        const tracking = github.comments(issue.repo, issue.number).filter((c) => c.body.includes("lisa:tracking"));
        expect(tracking, `${issue.repo}#${issue.number}`).toHaveLength(1);
      }

      // The victim's runs (the hanging one, and any other it held): taken over by the others.
      const runs = await store.runs.inState("review");
      const hungRun = Number(/run-(\d+)-step-/.exec(hungIn)?.[1]);
      const takenOver = runs.filter((r) => r.restarts > 0);
      expect(takenOver.map((r) => r.id)).toContain(hungRun);
      for (const other of takenOver) {
        expect(other.restarts).toBe(1);
        expect(other.worker).not.toBe(victim);
        const note = (await store.events.of(other.id)).find((event) => event.kind === "taken_over")?.detail;
        expect(note).toContain(`Worker ${victim} stopped renewing its claim`);
      }
      const run = runs.find((r) => r.id === hungRun);
      const kinds = (await store.events.of(run?.id ?? 0)).map((event) => event.kind);
      expect(kinds).toContain("taken_over");
      expect(kinds).toContain("work_redone");
      const step = (await store.steps.of(run?.id ?? 0)).find((s) => s.position > 0);
      const sessions = (await store.sessions.of(step?.id ?? 0)).map((s) => [s.purpose, s.state]);
      expect(sessions).toEqual([
        ["implement", "interrupted"],
        ["implement", "succeeded"],
      ]);
      const tracking =
        github.comments(`${run?.owner}/${run?.repo}`, run?.issue_number ?? 0).find((c) => c.body.includes("lisa:tracking"))
          ?.body ?? "";
      expect(tracking).toContain(`Worker ${victim} stopped renewing its claim`);
      expect(tracking).toContain("was not pushed and its worktree is gone, so the session runs again");
      // What the lost session wrote never reached GitHub.
      expect(await github.readFile(`acme/${run?.repo}`, "lost.txt", step?.branch)).toBeUndefined();

      // Every run was claimed by a worker that is alive, and the work was spread over them.
      const by = new Set(runs.map((r) => r.worker));
      expect(by.size).toBeGreaterThan(1);
      expect(await store.commands.pending()).toBe(0);
    } finally {
      await store.close();
    }
  }, 300_000);
});

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}
