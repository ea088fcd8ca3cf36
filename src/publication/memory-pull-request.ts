import type { LisaConfig } from "../config/config-schema.ts";
import type { CoreDeps } from "../deps.ts";
import type { GitHubReader } from "../github/github-port.ts";
import { cleanLine, code } from "../reporting/untrusted.ts";
import type { RunRow, StepRow } from "../store/store.ts";
import { branchName } from "../workspace/branch-name.ts";
import { commitOneFile } from "../workspace/commit-one-file.ts";
import { git } from "../workspace/git.ts";
import { pushCommit } from "../workspace/push-branch.ts";
import { syncMirror } from "../workspace/sync-mirror.ts";
import { issueRefFor } from "./issue-ref.ts";
import { learnedInRun, memoryWith, oneLine, parseMemory } from "./memory-file.ts";
import { ensurePullRequest } from "./pull-requests.ts";

/** Learnings a memory pull request's body lists; the file has them all. */
const MAX_LISTED = 40;

/** The branch of the run's memory pull request in `step`'s repository: `lisa/memory-12` (`lisa/memory-api-12` for another repository's issue). */
export const memoryBranch = (run: RunRow, step: StepRow) =>
  `lisa/memory-${branchName(run.issue_number, "", run, step).slice("lisa/".length)}`;

/** Written into the memory commit, so a restart knows the branch as this run's. */
const runMark = (run: RunRow) => `Lisa-Run: ${run.id}`;

/**
 * With `memory.propose: own_pr`, an accepted (or merged) run proposes what it taught to each of its
 * repositories' memory file through one pull request of Lisa's own there, consolidated with the
 * file as the default branch has it now. Lisa writes the commit from git objects alone (no agent,
 * no worktree) on a branch named after the issue. Each part looks before it writes, so a
 * redelivered webhook or a restart mid-way opens one branch and one pull request. True when it
 * recorded a pull request now.
 */
export async function proposeMemoryPulls(deps: CoreDeps, gh: GitHubReader, runId: number, config: LisaConfig): Promise<boolean> {
  const { store } = deps;
  const run = await store.runs.get(runId);
  if (!run) return false;
  const memory = config.memory;
  if (memory.propose !== "own_pr") return false;
  const recorded = await store.learnings.memoryPulls(runId);
  let opened = false;
  for (const step of (await store.steps.of(runId)).filter((s) => s.position > 0)) {
    const same = (r: { owner: string; repo: string }) =>
      r.owner.toLowerCase() === step.owner.toLowerCase() && r.repo.toLowerCase() === step.repo.toLowerCase();
    if (recorded.some(same)) continue;
    // Only what trusted people and Lisa's own checks taught, over every pass of the run.
    const learned = await learnedInRun(store, run, step, deps.heldSecrets);
    if (learned.length === 0) continue;
    const pull = await openMemoryPull(deps, gh, run, step, { ...memory, learned });
    if (!pull) continue;
    await store.learnings.recordMemoryPull({ run_id: run.id, owner: step.owner, repo: step.repo, ...pull });
    opened = true;
  }
  return opened;
}

async function openMemoryPull(
  deps: CoreDeps,
  gh: GitHubReader,
  run: RunRow,
  step: StepRow,
  memory: { file: string; max_lines: number; learned: string[] },
): Promise<{ branch: string; pr_number: number; pr_url: string } | undefined> {
  const ref = { owner: step.owner, repo: step.repo };
  const token = await gh.installationToken();
  const mirror = await syncMirror(deps.workspace, ref, token);
  // The branch later runs read the memory from (memoryForPrompt).
  const base = step.base_branch ?? (await gh.defaultBranch(ref));
  const branch = await ourBranch(mirror, run, memoryBranch(run, step));
  if (!branch) {
    deps.log.warn({ runId: run.id, repo: `${ref.owner}/${ref.repo}` }, "memory branches taken by others; no memory pull request");
    return undefined;
  }
  const issue = issueRefFor(run, step);
  const title = `Lisa's memory: what ${issue} taught`;
  if (!branch.exists) {
    const parent = await git(mirror, ["rev-parse", "--verify", "--end-of-options", `refs/remotes/origin/${base}^{commit}`]);
    const current = await git(mirror, ["cat-file", "blob", `${parent}:${memory.file}`]).catch(() => "");
    // A line the file has already needs no pull request.
    const fresh = memory.learned.filter((line) => !parseMemory(current).includes(oneLine(line)));
    if (fresh.length === 0) return undefined;
    const content = memoryWith(current, fresh, memory.max_lines);
    const message = `${title}\n\nProposed by Lisa at the acceptance of ${issue}.\n\n${runMark(run)}`;
    const commit = await commitOneFile(mirror, { parent, file: memory.file, content, message });
    await pushCommit(deps.workspace, ref, { commit, branch: branch.name }, token, deps.heldSecrets);
  }
  const pr = await ensurePullRequest(gh, ref, {
    title,
    body: memoryPullBody(run, step, memory, deps.heldSecrets),
    head: branch.name,
    base,
  });
  return { branch: branch.name, pr_number: pr.number, pr_url: pr.url };
}

/**
 * The run's memory branch: `name` when it is free or holds this run's commit (pushed before a
 * restart), else one named after the run too (an earlier run of the issue left `name`); none when
 * both are someone else's.
 */
async function ourBranch(mirror: string, run: RunRow, name: string): Promise<{ name: string; exists: boolean } | undefined> {
  for (const candidate of [name, `${name}-run-${run.id}`]) {
    const head = `refs/remotes/origin/${candidate}`;
    const exists = await git(mirror, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${head}^{commit}`]).then(
      () => true,
      () => false,
    );
    if (!exists) return { name: candidate, exists };
    const messages = await git(mirror, ["log", "--max-count=20", "--format=%B", head]);
    if (messages.split("\n").includes(runMark(run))) return { name: candidate, exists };
  }
  return undefined;
}

/** What the pull request says: where the learnings come from and why to review them; every learning is a clean line. */
function memoryPullBody(
  run: RunRow,
  step: StepRow,
  memory: { file: string; learned: string[] },
  secrets: readonly string[],
): string {
  const issue = issueRefFor(run, step);
  const lines = memory.learned.slice(0, MAX_LISTED).map((line) => `- ${cleanLine(line, { secrets, max: 300 })}`);
  const more = memory.learned.length - lines.length;
  return [
    `Lisa proposes what ${issue} taught it for ${code(memory.file, { secrets })}, the file it reads from the default branch into every agent's prompt in this repository. Review it like code: edit or drop lines before merging, or close this pull request to keep none.`,
    "",
    "#### What the run taught",
    "",
    ...lines,
    ...(more > 0 ? [`- …and ${more} more, in the file`] : []),
    "",
    `Each line names who taught it and where: guidance a writer gave that the agent addressed, a gate Lisa saw fail and then pass, or a commit people pushed to the run's branch. Issue bodies, readers' comments and the agent's own words are never taken.`,
  ].join("\n");
}
