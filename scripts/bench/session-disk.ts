import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { tempDir } from "../../dev/temp-dir.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { diskKiB, LARGE_REPO_FILES, largeRepoFiles, rawGit } from "./large-repo.ts";
import { median, REPS, verdict } from "./stats.ts";

/** The agents' sandbox homes, which Lisa makes in the temporary folder for each session. */
const sandboxHomes = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith("lisa-home-")));

/**
 * Disk per extra concurrent session: with one session of the large repository under way (its
 * mirror made), each further session's growth of Lisa's data directory and of the sandbox homes,
 * against one plain checkout (`git worktree add`) of the same commit, interleaved.
 */
export async function sessionDisk(): Promise<void> {
  const agent = createFakeClaude([{ hang: true }]);
  const env = await startEmulatedLisa({ claudeBinary: agent.binary, concurrency: REPS + 1 });
  const { github, lisa } = env;
  try {
    await github.createRepo("bench/large", { files: largeRepoFiles(), config: "label: lisa\n" });
    github.addCollaborator("bench/large", "alice", "write");
    const token = github.createInstallationToken();
    const raw = tempDir("bench-checkout");
    await rawGit(raw, ["clone", "--bare", "--quiet", `${github.gitBaseUrl}/bench/large.git`, "large.git"], token);

    const startSession = async (title: string) => {
      const issue = await github.createIssue("bench/large", { title, user: "alice" });
      await github.labelIssue("bench/large", issue.number, "lisa", "alice");
      await waitFor(
        `${title}'s session`,
        async () => {
          const run = await lisa.store.runs.latestFor("bench", "large", issue.number);
          return run !== undefined && (await lisa.store.sessions.runningIn(run.id)).length > 0;
        },
        300_000,
      );
    };
    await startSession("First session");
    const lisaKiB: number[] = [];
    const checkoutKiB: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const homesBefore = sandboxHomes();
      const before = await diskKiB(env.dataDir);
      await startSession(`Session ${rep + 2}`);
      const homes = [...sandboxHomes()].filter((name) => !homesBefore.has(name)).map((name) => path.join(tmpdir(), name));
      lisaKiB.push((await diskKiB(env.dataDir)) - before + (homes.length ? await diskKiB(...homes) : 0));
      const checkout = path.join(raw, `checkout-${rep}`);
      await rawGit(path.join(raw, "large.git"), ["worktree", "add", "--quiet", "--detach", checkout, "main"]);
      checkoutKiB.push(await diskKiB(checkout));
    }
    const ratio = median(lisaKiB) / median(checkoutKiB);
    const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
    console.log(
      `Disk per extra concurrent session, ${LARGE_REPO_FILES} files, median of ${REPS}: Lisa ${mib(median(lisaKiB))}, one checkout ${mib(median(checkoutKiB))}, ${ratio.toFixed(2)}× (goal ≤ 1.1×: ${verdict(ratio <= 1.1)})`,
    );
  } finally {
    for (const pid of agent.processes()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    await env.stop();
  }
}
