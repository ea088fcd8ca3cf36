import { writeFile } from "node:fs/promises";
import path from "node:path";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { tempDir } from "../../dev/temp-dir.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator } from "../../emulator/github-emulator.ts";
import { createWorktree } from "../../src/workspace/create-worktree.ts";
import { removeWorktree } from "../../src/workspace/remove-worktree.ts";
import { syncMirror } from "../../src/workspace/sync-mirror.ts";
import type { WorkspaceOptions } from "../../src/workspace/workspace-paths.ts";
import { LARGE_REPO_FILES, largeRepoFiles, rawGit } from "./large-repo.ts";
import { median, REPS, seconds, verdict } from "./stats.ts";

const REF = { owner: "bench", repo: "large" };
const AUTHOR = { name: "Lisa", email: "lisa@example.invalid" };

/**
 * A mirror of the large repository cloned with plain git, and the raw operations the figures
 * compare Lisa with: `git fetch` and `git worktree add` (set-up), then a commit and a push (the
 * floor of a step).
 */
async function rawMirror(remote: string, token: string) {
  const root = tempDir("bench-raw");
  const mirror = path.join(root, "large.git");
  await rawGit(root, ["clone", "--bare", "--quiet", remote, mirror], token);
  await rawGit(mirror, ["config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"]);
  await rawGit(mirror, ["fetch", "--quiet", "origin"], token);
  return {
    async setUp(name: string): Promise<string> {
      await rawGit(mirror, ["fetch", "--prune", "--quiet", "origin"], token);
      const dir = path.join(root, name);
      await rawGit(mirror, ["worktree", "add", "--quiet", "-B", name, dir, "refs/remotes/origin/main"]);
      return dir;
    },
    async deliver(dir: string, name: string): Promise<void> {
      await writeFile(path.join(dir, "change.txt"), `${name}\n`);
      await rawGit(dir, ["add", "--all"]);
      await rawGit(dir, ["commit", "--quiet", "-m", name]);
      await rawGit(dir, ["push", "--quiet", remote, `HEAD:refs/heads/${name}`], token);
    },
    async remove(dir: string, name: string): Promise<void> {
      await rawGit(mirror, ["worktree", "remove", "--force", dir]);
      await rawGit(mirror, ["branch", "-D", name]);
    },
  };
}

/**
 * In-process: Lisa's set-up of a session (syncMirror, then createWorktree) against `git fetch` and
 * `git worktree add`, each from a warm mirror of the large repository, interleaved.
 */
export async function sessionSetupInProcess(): Promise<void> {
  const github = createGitHubEmulator({ reposRoot: tempDir("bench-repos"), webhookSecret: "bench" });
  await github.start();
  try {
    await github.createRepo("bench/large", { files: largeRepoFiles() });
    const token = github.createInstallationToken();
    const remote = `${github.gitBaseUrl}/bench/large.git`;
    const options: WorkspaceOptions = { dataDir: tempDir("bench-lisa"), gitBaseUrl: github.gitBaseUrl, author: AUTHOR };
    await syncMirror(options, REF, token);
    const raw = await rawMirror(remote, token);
    const lisaMs: number[] = [];
    const rawMs: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      // Alternate which goes first, so neither always meets a cache the other just warmed.
      const order = rep % 2 ? ["lisa", "raw"] : ["raw", "lisa"];
      for (const who of order) {
        const name = `${who}-${rep}`;
        const started = performance.now();
        if (who === "raw") {
          const dir = await raw.setUp(name);
          rawMs.push(performance.now() - started);
          await raw.remove(dir, name);
        } else {
          await syncMirror(options, REF, token);
          const worktree = await createWorktree(options, REF, { branch: name, base: "main", dir: name });
          lisaMs.push(performance.now() - started);
          await removeWorktree(options, REF, worktree);
        }
      }
    }
    const ratio = median(lisaMs) / median(rawMs);
    console.log(
      `Session set-up in-process, ${LARGE_REPO_FILES} files, median of ${REPS}: Lisa ${seconds(median(lisaMs))}, raw git ${seconds(median(rawMs))}, ${ratio.toFixed(2)}× (goal ≤ 1.2×: ${verdict(ratio <= 1.2)})`,
    );
  } finally {
    await github.stop();
  }
}

/**
 * As deployed (Octokit throttling on, webhooks over HTTP, git over HTTP): from labeling an issue of
 * the large repository to its agent session's start, against `git fetch` + `git worktree add`; and
 * the whole step less its agent session (label to review gate) against the git floor of a step
 * (fetch, worktree add, commit, push). The agent is near-instant; the first run warms the mirror.
 */
export async function sessionSetupDeployed(): Promise<void> {
  const agent = createFakeClaude([{ write: { "change.txt": "ok\n" }, manifest: { title: "Change", what: "Changes it." } }]);
  const env = await startEmulatedLisa({ claudeBinary: agent.binary, deployed: true });
  const { github, lisa } = env;
  try {
    await github.createRepo("bench/large", { files: largeRepoFiles(), config: "label: lisa\ngates:\n  - test -f change.txt\n" });
    github.addCollaborator("bench/large", "alice", "write");
    const token = github.createInstallationToken();
    const raw = await rawMirror(`${github.gitBaseUrl}/bench/large.git`, token);

    /** One run of Lisa: label to agent start, and label to review gate less the agent's time. */
    const lisaRun = async (title: string) => {
      const issue = await github.createIssue("bench/large", { title, user: "alice" });
      const labeled = Date.now();
      await github.labelIssue("bench/large", issue.number, "lisa", "alice");
      const { id: runId } = await waitFor(
        `${title} to reach review`,
        async () => {
          const run = await lisa.store.runs.latestFor("bench", "large", issue.number);
          if (run?.state === "failed") throw new Error(`bench: ${title} failed`);
          return run?.state === "review" && run;
        },
        300_000,
      );
      const steps = await lisa.store.steps.of(runId);
      const sessions = (await Promise.all(steps.map((step) => lisa.store.sessions.of(step.id)))).flat();
      const reviewAt = (await lisa.store.events.of(runId)).find((event) => event.to_state === "review")?.created_at ?? Number.NaN;
      const agentMs = sessions.reduce((sum, s) => sum + ((s.finished_at ?? s.started_at) - s.started_at), 0);
      const firstSession = Math.min(...sessions.map((s) => s.started_at));
      // The run's last writes (review label, tracking comment) go on after the gate opens and
      // hold its worker slot; the next run must not start behind them.
      await env.settle();
      return { setUp: firstSession - labeled, overhead: reviewAt - labeled - agentMs };
    };

    await lisaRun("Warm the mirror");
    const setUp = { lisa: [] as number[], raw: [] as number[] };
    const step = { lisa: [] as number[], raw: [] as number[] };
    for (let rep = 0; rep < REPS; rep++) {
      const order = rep % 2 ? ["lisa", "raw"] : ["raw", "lisa"];
      for (const who of order) {
        if (who === "lisa") {
          const figures = await lisaRun(`Change ${rep}`);
          setUp.lisa.push(figures.setUp);
          step.lisa.push(figures.overhead);
        } else {
          const name = `raw-${rep}`;
          const started = performance.now();
          const dir = await raw.setUp(name);
          setUp.raw.push(performance.now() - started);
          await raw.deliver(dir, name);
          step.raw.push(performance.now() - started);
          await raw.remove(dir, name);
        }
      }
    }
    const setUpRatio = median(setUp.lisa) / median(setUp.raw);
    console.log(
      `Session set-up as deployed (label to agent start), median of ${REPS}: Lisa ${seconds(median(setUp.lisa))}, raw git ${seconds(median(setUp.raw))}, ${setUpRatio.toFixed(2)}× (goal ≤ 1.2×: ${verdict(setUpRatio <= 1.2)})`,
    );
    const floor = median(step.raw);
    const overhead = median(step.lisa);
    console.log(
      `Step less its agent (label to review gate), median of ${REPS}: Lisa ${seconds(overhead)}, git floor (fetch, worktree add, commit, push) ${seconds(floor)}, ${(overhead / floor).toFixed(2)}×; goal ≤ 1.1× + 1 s = ${seconds(floor * 1.1 + 1000)}: ${verdict(overhead <= floor * 1.1 + 1000)}`,
    );
  } finally {
    await env.stop();
  }
}
