import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { StepError } from "../../errors.ts";
import { code, fenced } from "../../reporting/untrusted.ts";
import { runSandboxed } from "../../sandbox/run-sandboxed.ts";
import type { StepRow } from "../../store/store.ts";
import { git } from "../../workspace/git.ts";
import {
  evictSetupCache,
  ignoredPaths,
  recordCacheOutcome,
  restoreSetup,
  setupCacheKey,
  setupCacheRoot,
  storeSetup,
} from "../../workspace/setup-cache.ts";
import type { RunContext } from "../context/run-context.ts";
import { type Checkout, workDir } from "../session/invoke-agent.ts";
import { setupEgress } from "../session/network-egress.ts";
import { agentEnv } from "../session/recorded-session.ts";

/** What the set-up cache may hold on this host, when the operator sets no LISA_CACHE_MAX_BYTES: 20 GiB. */
export const DEFAULT_CACHE_MAX_BYTES = 20 * 1024 ** 3;

/** How a worktree got what set-up makes, for the logs, the benchmark and the real-projects suite. */
export interface Prepared {
  how: "none" | "done" | "restored" | "ran";
  /** Running set-up, or restoring it, in milliseconds. */
  ms: number;
  stored?: boolean;
}

/**
 * Runs the repository's `setup` commands in the step's worktree before its first agent session,
 * or restores what they made from the set-up cache when an entry has the same key. A worktree
 * already set up with this key (a step resumed after a restart) is left as it is. Set-up runs in
 * the sandbox with the agent's environment (never a secret of Lisa's) and reaches `allow_hosts` and
 * the operator's hosts. What it made is stored only when the worktree holds nothing but the base
 * branch's commits: a branch an agent worked on never fills the cache other steps restore from.
 * @throws StepError when a set-up command fails: the run fails, and `/lisa retry` runs it again
 */
export async function prepareWorktree(ctx: RunContext, step: StepRow, checkout: Checkout): Promise<Prepared> {
  const stepId = step.id;
  const { config, deps } = ctx;
  if (config.setup.length === 0) return { how: "none", ms: 0 };
  const dir = workDir(checkout);
  const key = await setupCacheKey(dir, checkout.ref, config.setup, config.setup_cache.key);
  const marker = path.resolve(dir, (await git(dir, ["rev-parse", "--git-dir"])).trim(), "lisa-setup");
  if (existsSync(marker) && (await readFile(marker, "utf8")) === key) return { how: "done", ms: 0 };
  const root = setupCacheRoot(deps.workspace.dataDir);
  const cached = config.setup_cache.enabled;
  const started = Date.now();
  if (cached && (await restore(ctx, root, key, dir, checkout))) {
    const ms = Date.now() - started;
    deps.metrics.setupCache("hit", ms);
    await recordCacheOutcome(root, "hit");
    deps.log.info({ runId: ctx.run.id, stepId, key, ms }, "set-up restored from the cache");
    await writeFile(marker, key);
    return { how: "restored", ms };
  }
  if (cached) {
    deps.metrics.setupCache("miss");
    await recordCacheOutcome(root, "miss");
  }
  await runSetup(ctx, stepId, checkout, dir);
  const ms = Date.now() - started;
  deps.metrics.setupRan(ms);
  let stored = false;
  if (cached && (await onBase(step.base_branch ?? config.base_branch, dir))) {
    const storing = Date.now();
    const entry = await storeSetup(root, checkout.ref, key, dir);
    deps.metrics.setupStored(Date.now() - storing);
    stored = entry !== undefined;
    await evictSetupCache(root, deps.workspace.cacheMaxBytes ?? DEFAULT_CACHE_MAX_BYTES);
    deps.log.info({ runId: ctx.run.id, stepId, key, bytes: entry?.bytes }, "set-up stored in the cache");
  }
  await writeFile(marker, key);
  return { how: "ran", ms, stored };
}

/** A restore cut off halfway (an entry evicted under it) leaves no part of itself: set-up runs instead. */
async function restore(ctx: RunContext, root: string, key: string, dir: string, checkout: Checkout): Promise<boolean> {
  const before = new Set(await ignoredPaths(dir));
  try {
    return await restoreSetup(root, checkout.ref, key, dir);
  } catch (error) {
    ctx.deps.log.warn({ err: error, runId: ctx.run.id }, "could not restore set-up from the cache; running it");
    for (const relative of await ignoredPaths(dir))
      if (!before.has(relative)) await rm(path.join(dir, relative), { recursive: true, force: true });
    return false;
  }
}

/** Whether the worktree's HEAD is on the base branch as fetched: only reviewed code fills the cache. */
async function onBase(base: string | undefined | null, dir: string): Promise<boolean> {
  if (!base) return false;
  try {
    await git(dir, ["merge-base", "--is-ancestor", "HEAD", `refs/remotes/origin/${base}`]);
    return true;
  } catch {
    return false;
  }
}

/** Lines of a failed set-up's output the issue is shown. */
const SHOWN_LINES = 30;

async function runSetup(ctx: RunContext, stepId: number, checkout: Checkout, dir: string): Promise<void> {
  const { config, deps } = ctx;
  const timeoutMs = config.limits.setup_timeout;
  for (const command of config.setup) {
    const result = await runSandboxed("sh", ["-c", command], {
      cwd: dir,
      env: agentEnv(ctx, []),
      timeoutMs,
      sandbox: { ...deps.sandbox, ...checkout.scope, egress: setupEgress(ctx, stepId) },
    });
    if (result.ending === "exited" && result.exitCode === 0) continue;
    const how =
      result.ending === "timeout"
        ? `did not finish within limits.setup_timeout (${Math.round(timeoutMs / 1000)}s)`
        : result.ending === "exited" && result.exitCode !== undefined
          ? `exited with ${result.exitCode}`
          : result.ending === "spawn_failed"
            ? "could not start"
            : "was ended by a signal";
    const output = result.all.trim()
      ? `Its last lines:\n\n${fenced(result.all, { secrets: ctx.secrets, maxLines: SHOWN_LINES, maxLineLength: 120 })}`
      : "It printed nothing.";
    throw new StepError(
      [
        `Set-up failed in ${checkout.ref.owner}/${checkout.ref.repo}: ${code(command, { secrets: ctx.secrets })} ${how}.`,
        "",
        output,
        "",
        "Set-up is the repository's, not the agent's to fix, so no agent ran: fix the repository or the `setup` of its `.github/lisa.yml`, then comment `/lisa retry`.",
      ].join("\n"),
    );
  }
}
