import type { Store } from "../store/store.ts";
import { CONFIG_PATH } from "./parse-config.ts";
import type { ConfigFileCache } from "./resolve-config.ts";

/**
 * How long a worker's read of a repository's config vouches for its Lisa label at the web process.
 * A minute: a label renamed in `.github/lisa.yml` is obeyed within it, while a flood of other labels
 * stores one command per repository per minute instead of one per label; each revalidation is a
 * conditional request, which GitHub does not count against the rate limit.
 */
export const CONFIG_FRESH_MS = 60_000;

/** Whether a copy validated at `validatedAt` is still fresh; a clock far off either way makes it stale, never fresher. */
export const isFresh = (validatedAt: number, now: number) => Math.abs(now - validatedAt) < CONFIG_FRESH_MS;

/** The store's copies of one installation's config files, for resolveConfig. */
export function storeConfigCache(store: Store, installationId: number, now: () => number): ConfigFileCache {
  return {
    async get({ owner, repo, path }) {
      const row = await store.configFiles.get(installationId, owner, repo, path);
      return row && { etag: row.etag, content: row.content, validatedAt: row.validated_at };
    },
    async put({ owner, repo, path }, { etag, content }, label) {
      await store.configFiles.save({
        installation_id: installationId,
        owner,
        repo,
        path,
        etag,
        content,
        label,
        validated_at: now(),
      });
    },
    fresh: (validatedAt) => isFresh(validatedAt, now()),
  };
}

/** How long the web process keeps a repository's row before it reads it again: a flood costs one read a second, not one a delivery. */
export const EDGE_ROW_MS = 1_000;

/**
 * What the web process asks of each `issues.labeled`: the repository's Lisa label when a fresh read
 * says `label` is not it (the delivery is dropped, since the worker would only answer "another
 * label"); undefined when it must be stored.
 */
export function foreignLabels(
  store: Store,
): (command: { installationId: number; owner: string; repo: string; label: string }, now: number) => Promise<string | undefined> {
  // Only fresh rows are kept: a repository no worker has read yet is read again at once, as a
  // worker may read it any moment now.
  const rows = new Map<string, { label: string; validatedAt: number; readAt: number }>();
  return async (command, now) => {
    const key = `${command.installationId}:${command.owner}/${command.repo}`.toLowerCase();
    let kept = rows.get(key);
    if (!kept || Math.abs(now - kept.readAt) >= EDGE_ROW_MS || !isFresh(kept.validatedAt, now)) {
      rows.delete(key);
      const row = await store.configFiles.get(command.installationId, command.owner, command.repo, CONFIG_PATH);
      if (!row || row.label === null || !isFresh(row.validated_at, now)) return undefined;
      kept = { label: row.label, validatedAt: row.validated_at, readAt: now };
      rows.set(key, kept);
      // Bounded: the oldest go first.
      if (rows.size > 10_000) rows.delete(rows.keys().next().value as string);
    }
    return kept.label === command.label ? undefined : kept.label;
  };
}
