import path from "node:path";
import type { WorkDirRoots } from "./mirror-hygiene.ts";

export interface RepoRef {
  owner: string;
  repo: string;
}

export interface WorkspaceOptions {
  /** Lisa's data directory; mirrors and worktrees live under it. */
  dataDir: string;
  /** Where repositories are cloned from, e.g. `https://github.com`; a GHES host or a local path in tests. */
  gitBaseUrl: string;
  /** Identity of the commits Lisa makes. */
  author: { name: string; email: string };
  /** Disk the set-up cache may hold (LISA_CACHE_MAX_BYTES); 20 GiB when unset. */
  cacheMaxBytes?: number | undefined;
}

/** Files the agent writes for Lisa that must never be committed. */
export const LISA_FILES = [".lisa-manifest.json", ".lisa-plan.json"];

export const remoteUrl = (options: WorkspaceOptions, { owner, repo }: RepoRef) =>
  `${options.gitBaseUrl.replace(/\/+$/, "")}/${owner}/${repo}.git`;

export const mirrorPath = (options: WorkspaceOptions, { owner, repo }: RepoRef) =>
  path.join(options.dataDir, "mirrors", owner, `${repo}.git`);

export const worktreesRoot = (options: WorkspaceOptions) => path.join(options.dataDir, "worktrees");

/** The key of a repository's lock (repo-lock.ts): one per mirror, whatever the case of its name. */
export const lockKey = (ref: RepoRef) => `${ref.owner}/${ref.repo}`.toLowerCase();

/** Where a CLI's `--worktree <name>` puts its worktree: inside the mirror, not beside Lisa's. */
export const nativeWorktreePath = (options: WorkspaceOptions, ref: RepoRef, name: string) =>
  path.join(mirrorPath(options, ref), ".claude", "worktrees", name);

/** The folders a worktree of `mirror` may be in: Lisa's own, and the CLIs' inside the mirror. */
export const workDirRootsOf = (options: WorkspaceOptions, mirror: string): WorkDirRoots => ({
  dataDir: options.dataDir,
  roots: [worktreesRoot(options), path.join(mirror, ".claude", "worktrees")],
});

export const workDirRoots = (options: WorkspaceOptions, ref: RepoRef) => workDirRootsOf(options, mirrorPath(options, ref));
