import type { Store } from "../store/store.ts";
import { CONFIG_PATH, labelOf } from "./parse-config.ts";
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

/** The label a repository without `.github/lisa.yml` (or whose file names none) uses. */
const DEFAULT_LABEL = labelOf(null);

/** How long the web process keeps a repository's row before it reads it again: a flood costs one read a second, not one a delivery. */
export const EDGE_ROW_MS = 1_000;

/**
 * What the web process can tell of a label from the store's copy of the repository's config, without
 * calling GitHub: "foreign" on a fresh read that names another Lisa label (the delivery is dropped,
 * since the worker would only answer "another label"); "ours" when it is the label the last read (or,
 * with none, the default) names; "unsure" when only a stale read says it is not: the command is stored
 * behind those that are surely Lisa's, for a worker to revalidate the config.
 */
export type LabelVerdict = { kind: "ours" } | { kind: "unsure" } | { kind: "foreign"; lisaLabel: string };

/** The web process's triage of each Lisa-looking label, reading each repository's row at most once a second. */
export function labelTriage(
  store: Store,
): (command: { installationId: number; owner: string; repo: string; label: string }, now: number) => Promise<LabelVerdict> {
  // Only fresh rows are kept: a repository no worker has read lately is read again at once, as a
  // worker may read it any moment now.
  const rows = new Map<string, { label: string | null; validatedAt: number; readAt: number }>();
  return async (command, now) => {
    const key = `${command.installationId}:${command.owner}/${command.repo}`.toLowerCase();
    let kept = rows.get(key);
    if (!kept || Math.abs(now - kept.readAt) >= EDGE_ROW_MS || !isFresh(kept.validatedAt, now)) {
      rows.delete(key);
      const row = await store.configFiles.get(command.installationId, command.owner, command.repo, CONFIG_PATH);
      // A repository no worker has read is read like one read long ago: its label is the default.
      kept = { label: row ? row.label : null, validatedAt: row?.validated_at ?? Number.NEGATIVE_INFINITY, readAt: now };
      if (isFresh(kept.validatedAt, now)) rows.set(key, kept);
      // Bounded: the oldest go first.
      if (rows.size > 10_000) rows.delete(rows.keys().next().value as string);
    }
    const lisaLabel = kept.label ?? DEFAULT_LABEL;
    if (command.label === lisaLabel) return { kind: "ours" };
    // A fresh read of a file that named no label (invalid) cannot say the label is not Lisa's.
    return isFresh(kept.validatedAt, now) && kept.label !== null ? { kind: "foreign", lisaLabel } : { kind: "unsure" };
  };
}
