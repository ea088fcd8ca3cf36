import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startEmulatedLisa } from "../../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../../dev/fake-agent.ts";
import { pushBranch } from "../../../src/workspace/push-branch.ts";
import { tempDir } from "../../support/git-fixtures.ts";
import { KEY, lisaCheckout, PUSH_ATTACKS, REF, remoteHolds, TOKEN } from "../../support/planted-git.ts";
import { breachIf, type HostileGroup, type HostileInput } from "./hostile-input.ts";
import { SMALL_CHANGE } from "./lisa-world.ts";

// What the agent writes into git for Lisa to trust: replace refs, identities, file names, tags,
// notes, encodings and alternates for the push; forged worktree records for the native-worktree
// lookup. git-metadata-control.test.ts shows each working against Lisa with the defence off.

/** The push of Lisa's checkout after the agent planted `attack`: what it sent of the planted bytes. */
const pushInputs: HostileInput[] = PUSH_ATTACKS.map((attack) => ({
  name: attack.name,
  attempt: `${attack.attempt}, for Lisa to push`,
  run: async () => {
    const checkout = await lisaCheckout();
    const needle = attack.plant(checkout);
    await pushBranch(checkout.options, REF, { path: checkout.worktree.path, branch: "lisa/1-x" }, TOKEN, {
      secrets: [KEY],
    }).catch(() => undefined);
    return breachIf(remoteHolds(checkout.remote, needle), "secretsLeaked");
  },
}));

/**
 * Shell the agent runs in the worktree its CLI made: it deletes that worktree's record in the mirror
 * and writes one of its own, saying its branch is checked out at `target`.
 */
export function forgeRecord(target: string): string {
  return [
    "branch=$(git branch --show-current)",
    "own=$(git rev-parse --absolute-git-dir)",
    "common=$(git rev-parse --path-format=absolute --git-common-dir)",
    'rm -rf "$own"',
    'mkdir -p "$common/worktrees/forged"',
    `printf '%s\\n' '${path.join(target, ".git")}' > "$common/worktrees/forged/gitdir"`,
    `printf 'ref: refs/heads/%s\\n' "$branch" > "$common/worktrees/forged/HEAD"`,
    `printf '../..\\n' > "$common/worktrees/forged/commondir"`,
  ].join(" && ");
}

/** Issues of one repository worked in turn by a CLI that makes its own worktree (`--worktree`), each doing its invocation. */
export async function nativeSessions(
  invocations: FakeInvocation[],
  between: (dataDir: string, done: number) => void = () => undefined,
): Promise<void> {
  const agent = createFakeClaude(invocations, { version: "2.1.50" });
  const env = await startEmulatedLisa({ claudeBinary: agent.binary });
  try {
    const repo = `acme/native-${path.basename(tempDir("native"))}`;
    await env.github.createRepo(repo, { files: { "README.md": "# Service\n" }, config: "label: lisa\n" });
    env.github.addCollaborator(repo, "ann", "write");
    for (let n = 0; n < invocations.length; n++) {
      const issue = await env.github.createIssue(repo, { title: "Add a health check", body: "Add health().", user: "ann" });
      await env.github.labelIssue(repo, issue.number, "lisa", "ann");
      await env.settle();
      between(env.dataDir, n + 1);
    }
  } finally {
    await env.stop();
  }
}

/** A folder Lisa never gave the agent, with a file in it: it must still be there afterwards. */
function hostFolder(): { dir: string; survived: () => boolean } {
  const dir = tempDir("host-folder");
  writeFileSync(path.join(dir, "precious.txt"), "keep me\n");
  return { dir, survived: () => existsSync(path.join(dir, "precious.txt")) };
}

/** The failure path: the session crashes after forging, and Lisa clears away what it takes for the CLI's worktree. */
export async function forgedOnFailure(): Promise<boolean> {
  const victim = hostFolder();
  await nativeSessions([{ run: [forgeRecord(victim.dir)], crash: true }]);
  return victim.survived();
}

/**
 * The success path: a failed run keeps its worktree (with work nobody pushed); the next run's
 * session forges its CLI's record to point there, and ends well.
 */
export async function forgedOnSuccess(): Promise<boolean> {
  let kept = "";
  // The stand-in reads each invocation when it is called: the second is written once the first run has failed.
  const invocations: FakeInvocation[] = [{ crash: true }, SMALL_CHANGE];
  await nativeSessions(invocations, (dataDir, done) => {
    if (done !== 1) return;
    const root = path.join(dataDir, "worktrees");
    const [first] = readdirSync(root).filter((entry) => entry.startsWith("run-"));
    if (!first) throw new Error("the failed run kept no worktree");
    kept = path.join(root, first);
    writeFileSync(path.join(kept, "precious.txt"), "unpushed work of the failed run\n");
    invocations[1] = { ...SMALL_CHANGE, run: [forgeRecord(kept)] };
  });
  return existsSync(path.join(kept, "precious.txt"));
}

export const gitMetadataGroup: HostileGroup = {
  name: "git metadata",
  inputs: [
    ...pushInputs,
    {
      name: "forged-record-failure-path",
      attempt:
        "a CLI session that forges its worktree's record to point at a host folder, then crashes, for Lisa to remove that folder",
      run: async () => breachIf(!(await forgedOnFailure()), "unauthorizedRuns"),
    },
    {
      name: "forged-record-success-path",
      attempt:
        "a CLI session that forges its worktree's record to point at another run's kept worktree, then succeeds, for Lisa to commit there and remove it",
      run: async () => breachIf(!(await forgedOnSuccess()), "unauthorizedRuns"),
    },
  ],
};
