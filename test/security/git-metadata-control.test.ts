import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createWorktree } from "../../src/workspace/create-worktree.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { agentGit, KEY, lisaCheckout, PUSH_ATTACKS, REF, remoteHolds } from "../support/planted-git.ts";

// The control runs of hostile/git-metadata.ts: each attack against plain git, as Lisa ran it before
// issue 20 (replace objects on, message and added lines read, the mirror taken as the agent left it,
// git's worktree list believed). Each one gets through, so none of the group's inputs holds by not trying.

/** What the previous scan read of the unpushed commits: messages and added lines, replace objects on. */
function previousScanReads(dir: string): string {
  const messages = agentGit(dir, ["log", "--format=%B", "HEAD", "--not", "--remotes"]);
  const patch = agentGit(dir, ["log", "--format=", "--patch", "--text", "--no-ext-diff", "HEAD", "--not", "--remotes"]);
  const added = patch.split("\n").filter((line) => line.startsWith("+") && !line.startsWith("+++ "));
  return [messages, ...added].join("\n");
}

/** A plain push of the branch, as Lisa's own git made it once the scan found nothing. */
function plainPush(dir: string, remote: string, extra: string[] = []): void {
  try {
    agentGit(dir, ["push", "--quiet", remote, "HEAD:refs/heads/lisa/1-x", ...extra]);
  } catch {
    // A remote that refuses the ref (a tag object on a branch) has received the objects all the same.
  }
}

describe("git metadata attacks against plain git (the control)", () => {
  it.each(PUSH_ATTACKS.filter((a) => a.name !== "key-in-note"))(
    "gets $name past the previous scan and onto the remote",
    async (attack) => {
      const checkout = await lisaCheckout();
      const needle = attack.plant(checkout);
      expect(previousScanReads(checkout.worktree.path)).not.toContain(KEY);
      plainPush(checkout.worktree.path, checkout.remote);
      expect(remoteHolds(checkout.remote, needle)).toBe(true);
    },
  );

  it("gets a note's key onto the remote when the note's ref is pushed with the branch", async () => {
    const checkout = await lisaCheckout();
    const needle = PUSH_ATTACKS.find((a) => a.name === "key-in-note")?.plant(checkout) ?? "";
    plainPush(checkout.worktree.path, checkout.remote, ["refs/notes/commits"]);
    expect(remoteHolds(checkout.remote, needle)).toBe(true);
  });

  it("has git list a forged record's host folder on the CLI's branch, and remove it", async () => {
    const checkout = await lisaCheckout();
    const victim = tempDir("host-folder");
    writeFileSync(path.join(victim, "precious.txt"), "keep me\n");
    agentGit(checkout.mirror, ["branch", "worktree-lisa-1-1-p1-0", "refs/remotes/origin/main"]);
    const record = path.join(checkout.mirror, "worktrees", "forged");
    mkdirSync(record, { recursive: true });
    writeFileSync(path.join(record, "gitdir"), `${path.join(victim, ".git")}\n`);
    writeFileSync(path.join(record, "HEAD"), "ref: refs/heads/worktree-lisa-1-1-p1-0\n");
    writeFileSync(path.join(record, "commondir"), "../..\n");
    const listing = agentGit(checkout.mirror, ["worktree", "list", "--porcelain"]);
    const entry = listing.split("\n\n").find((e) => e.includes("branch refs/heads/worktree-lisa-1-1-p1-0")) ?? "";
    const listed = /^worktree (.+)$/m.exec(entry)?.[1] ?? "";
    expect(listed).toBe(victim);
    // What the previous failure path did with the folder it found.
    try {
      agentGit(checkout.mirror, ["worktree", "remove", "--force", "--force", listed]);
    } catch {
      // git refuses some; the folder is removed next anyway.
    }
    execFileSync("rm", ["-rf", listed]);
    expect(existsSync(path.join(victim, "precious.txt"))).toBe(false);
  });

  it("has a forged record of another run's worktree pass the previous check that a worktree is the mirror's", async () => {
    const checkout = await lisaCheckout();
    const other = await createWorktree(checkout.options, REF, { branch: "lisa/2-y", base: "main", dir: "run-2-step-1" });
    const common = agentGit(other.path, ["rev-parse", "--path-format=absolute", "--git-common-dir"]).trim();
    expect(common).toBe(checkout.mirror);
  });

  it("runs the filter driver a planted .gitattributes names once a config defines it", async () => {
    const checkout = await lisaCheckout();
    const dir = checkout.worktree.path;
    const marker = path.join(tempDir("marker"), "ran");
    writeFileSync(path.join(dir, ".gitattributes"), "* filter=evil\n");
    writeFileSync(path.join(dir, "a.txt"), "1\n");
    agentGit(dir, ["-c", `filter.evil.clean=touch ${marker}; cat`, "add", "--all"]);
    expect(existsSync(marker)).toBe(true);
  });
});
