import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SecretInPushError } from "../../src/errors.ts";
import { commitPending } from "../../src/workflow/step/commit-changes.ts";
import { createWorktree } from "../../src/workspace/create-worktree.ts";
import { findNativeWorktree } from "../../src/workspace/find-native-worktree.ts";
import { git } from "../../src/workspace/git.ts";
import { pushBranch } from "../../src/workspace/push-branch.ts";
import { removeWorktree } from "../../src/workspace/remove-worktree.ts";
import { sweepWorktrees } from "../../src/workspace/sweep-worktrees.ts";
import { nativeWorktreePath } from "../../src/workspace/workspace-paths.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { agentGit, KEY, lisaCheckout, PUSH_ATTACKS, REF, remoteHolds, TOKEN } from "../support/planted-git.ts";

/** What Lisa's push does with each planted attack: refuse it saying where (never the value), or send nothing of it. */
const EXPECTED: Record<string, RegExp | "sent-without-it" | "not-sent"> = {
  "replace-ref": /commit [0-9a-f]{7} adds a secret Lisa holds \(.*\) in `notes\.txt`/,
  "key-as-author-name": /commit [0-9a-f]{7} adds a secret Lisa holds \(.*\) in its author/,
  "key-as-committer-email": /commit [0-9a-f]{7} adds a secret Lisa holds \(.*\) in its committer/,
  "key-as-file-name": /commit [0-9a-f]{7} adds a secret Lisa holds \(.*\) in a file or folder name/,
  "key-in-tag-message": "sent-without-it",
  "key-in-note": "sent-without-it",
  "key-base64": /commit [0-9a-f]{7} adds a secret Lisa holds \(.*\), base64-encoded in `blob\.txt`/,
  "key-hex": /commit [0-9a-f]{7} adds a secret Lisa holds \(.*\), hex-encoded in `blob\.txt`/,
  "key-url-encoded": /commit [0-9a-f]{7} adds a secret Lisa holds \(.*\), URL-encoded in `blob\.txt`/,
  alternates: "not-sent",
  "object-folder-link": "not-sent",
};

describe("pushBranch against git metadata the agent wrote", () => {
  it.each(PUSH_ATTACKS)("sends nothing of $attempt ($name)", async (attack) => {
    const checkout = await lisaCheckout();
    const needle = attack.plant(checkout);
    const outcome = await pushBranch(checkout.options, REF, { path: checkout.worktree.path, branch: "lisa/1-x" }, TOKEN, {
      secrets: [KEY],
    }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(remoteHolds(checkout.remote, needle)).toBe(false);
    const expected = EXPECTED[attack.name];
    if (expected instanceof RegExp) {
      expect(outcome).toBeInstanceOf(SecretInPushError);
      expect(outcome?.message).toMatch(expected);
      expect(outcome?.message).not.toContain(KEY);
      expect(outcome?.message).not.toContain(needle.trim());
    } else if (expected === "sent-without-it") {
      // The branch's commit is published; the tag or note that holds the key is not.
      expect(outcome).toBeUndefined();
      const pushed = agentGit(checkout.remote, ["rev-parse", "refs/heads/lisa/1-x"]).trim();
      expect(pushed).toBe(agentGit(checkout.worktree.path, ["rev-parse", "HEAD^{commit}"]).trim());
    } else {
      expect(outcome).toBeInstanceOf(Error);
    }
  });

  it("reads commits without the replacements the agent planted, and removes them from the mirror", async () => {
    const checkout = await lisaCheckout();
    PUSH_ATTACKS.find((a) => a.name === "replace-ref")?.plant(checkout);
    expect(await git(checkout.worktree.path, ["show", "HEAD:notes.txt"])).toBe(KEY);
    await pushBranch(checkout.options, REF, { path: checkout.worktree.path, branch: "lisa/1-x" }, TOKEN, {
      secrets: [KEY],
    }).catch(() => undefined);
    expect(existsSync(path.join(checkout.mirror, "refs", "replace"))).toBe(false);
  });

  it("runs no filter driver a planted .gitattributes names, from the worktree's own config", async () => {
    const checkout = await lisaCheckout();
    const dir = checkout.worktree.path;
    const marker = path.join(tempDir("marker"), "ran");
    writeFileSync(path.join(dir, ".gitattributes"), "* filter=evil diff=evil\n");
    writeFileSync(path.join(dir, "a.txt"), "1\n");
    // The worktree's record is the agent's to write (all but `gitdir` and `commondir`).
    const record = (await git(dir, ["rev-parse", "--absolute-git-dir"])).trim();
    writeFileSync(path.join(record, "config.worktree"), `[filter "evil"]\n\tclean = touch ${marker}; cat\n\trequired = true\n`);
    await commitPending(dir, "work");
    await git(dir, ["diff", "HEAD~1", "HEAD"]);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("worktree registrations the agent forged", () => {
  /** The agent's forgery: a record in the mirror saying the CLI's branch is checked out at `target`. */
  function forgeRegistration(mirror: string, target: string, branch: string): void {
    const record = path.join(mirror, "worktrees", "forged");
    mkdirSync(record, { recursive: true });
    writeFileSync(path.join(record, "gitdir"), `${path.join(target, ".git")}\n`);
    writeFileSync(path.join(record, "HEAD"), `ref: refs/heads/${branch}\n`);
    writeFileSync(path.join(record, "commondir"), "../..\n");
  }

  function hostDir(): string {
    const dir = tempDir("host-dir");
    writeFileSync(path.join(dir, "precious.txt"), "keep me\n");
    return dir;
  }

  it("finds no native worktree in a record that points out of Lisa's folders, and leaves that folder alone", async () => {
    const checkout = await lisaCheckout();
    const victim = hostDir();
    agentGit(checkout.mirror, ["branch", "worktree-lisa-1-1-p1-0", "refs/remotes/origin/main"]);
    forgeRegistration(checkout.mirror, victim, "worktree-lisa-1-1-p1-0");
    const found = await findNativeWorktree(checkout.options, REF, { name: "lisa-1-1-p1-0", branch: "worktree-lisa-1-1-p1-0" });
    expect(found).toBeUndefined();
    expect(existsSync(path.join(checkout.mirror, "worktrees", "forged"))).toBe(false);
    expect(readFileSync(path.join(victim, "precious.txt"), "utf8")).toBe("keep me\n");
  });

  it("refuses a record that points at another of Lisa's worktrees, naming both places", async () => {
    const checkout = await lisaCheckout();
    const other = await createWorktree(checkout.options, REF, { branch: "lisa/2-y", base: "main", dir: "run-2-step-1" });
    writeFileSync(path.join(other.path, "unpushed.txt"), "another run's work\n");
    agentGit(checkout.mirror, ["branch", "worktree-lisa-1-1-p1-0", "refs/remotes/origin/main"]);
    forgeRegistration(checkout.mirror, other.path, "worktree-lisa-1-1-p1-0");
    const error = await findNativeWorktree(checkout.options, REF, {
      name: "lisa-1-1-p1-0",
      branch: "worktree-lisa-1-1-p1-0",
    }).catch((e: Error) => e);
    expect(String(error)).toContain(
      `not where the CLI makes its own (${nativeWorktreePath(checkout.options, REF, "lisa-1-1-p1-0")})`,
    );
    expect(String(error)).toContain("Lisa neither uses nor removes it");
    expect(readFileSync(path.join(other.path, "unpushed.txt"), "utf8")).toBe("another run's work\n");
  });

  it("removes no folder reached through a link the agent planted in the mirror's .claude/", async () => {
    const checkout = await lisaCheckout();
    const elsewhere = tempDir("host-dir");
    const victim = path.join(elsewhere, "lisa-1-1-p1-0");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "precious.txt"), "keep me\n");
    mkdirSync(path.join(checkout.mirror, ".claude"), { recursive: true });
    symlinkSync(elsewhere, path.join(checkout.mirror, ".claude", "worktrees"));
    await expect(
      removeWorktree(checkout.options, REF, { path: nativeWorktreePath(checkout.options, REF, "lisa-1-1-p1-0") }),
    ).rejects.toThrow("is not a worktree folder of Lisa's; Lisa will not remove it");
    expect(readFileSync(path.join(victim, "precious.txt"), "utf8")).toBe("keep me\n");
  });

  it("sweeps nothing out of a host folder the mirror's .claude/worktrees was turned into a link to", async () => {
    const checkout = await lisaCheckout();
    const victim = hostDir();
    mkdirSync(path.join(checkout.mirror, ".claude"), { recursive: true });
    symlinkSync(victim, path.join(checkout.mirror, ".claude", "worktrees"));
    await sweepWorktrees(checkout.options, new Set([checkout.worktree.path]));
    expect(readFileSync(path.join(victim, "precious.txt"), "utf8")).toBe("keep me\n");
  });
});
