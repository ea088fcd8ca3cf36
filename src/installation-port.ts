import type { Probot, ProbotOctokit } from "probot";
import { storeConfigCache } from "./config/config-cache.ts";
import { createGitHubPort } from "./github/create-github-port.ts";
import { asGitHubError } from "./github/github-error.ts";
import type { GitHubPort } from "./github/github-publisher.ts";
import { type PageCache, pageCache } from "./github/page-cache.ts";
import { cachedTokens } from "./github/token-cache.ts";
import { createWritePacer, type LongWait, paceWrites } from "./github/write-pacer.ts";
import type { LisaMetrics } from "./metrics/lisa-metrics.ts";
import type { Store } from "./store/store.ts";

type Hooked = { hook: InstanceType<typeof ProbotOctokit>["hook"] };

/**
 * The port of each installation of the App: its requests counted, its writes paced through the
 * store (shared by every Lisa process), its config reads conditional on the store's copies.
 */
export function installationPorts(
  app: Probot,
  {
    store,
    metrics,
    now,
    pace,
    appId: knownAppId,
  }: { store: Store; metrics: LisaMetrics; now: () => number; pace: boolean; appId?: number | undefined },
): (installationId: number) => Promise<GitHubPort> {
  // The App's id (APP_ID), else asked of GitHub once: its check runs are found by it, not by their name alone.
  let appId: Promise<number> | undefined = knownAppId === undefined ? undefined : Promise.resolve(knownAppId);
  const ownId = () => {
    appId ??= app
      .auth()
      .then(async (client) => {
        const { data } = await client.rest.apps.getAuthenticated();
        if (!data) throw new Error("GitHub did not say which App this is");
        return data.id;
      })
      .catch((error) => {
        appId = undefined;
        throw error;
      });
    return appId;
  };
  // One token cache per installation, for every port made for it: git operations reuse the token.
  const tokens = new Map<number, () => Promise<string>>();
  const tokenOf = (installationId: number) => {
    const cached =
      tokens.get(installationId) ??
      cachedTokens(async () => {
        // Asked as the App, not through the installation client's auth hook, which ignores a
        // custom baseUrl (GHES, the emulator) whenever its token cache is empty.
        const appClient = await app.auth();
        const { data } = await appClient.rest.apps.createInstallationAccessToken({ installation_id: installationId });
        return { token: data.token, expiresAt: Date.parse(data.expires_at) };
      }, Date.now);
    tokens.set(installationId, cached);
    return cached;
  };
  // One cache of polled pages per installation, for every port made for it: the next poll asks on their ETags.
  const pages = new Map<number, PageCache>();
  return async (installationId) => {
    const waits = new Set<(wait: LongWait) => void>();
    let octokit: Hooked = counted(await app.auth(installationId), metrics);
    if (pace) octokit = paced(octokit, { store, installationId, app, waits });
    const port = createGitHubPort(octokit as never, tokenOf(installationId), {
      configCache: storeConfigCache(store, installationId, now),
      appId: ownId,
      pageCache: pages.get(installationId) ?? pages.set(installationId, pageCache()).get(installationId),
    });
    return Object.assign(port, { onWriteWait: (listener: (wait: LongWait) => void) => void waits.add(listener) });
  };
}

/** An installation's Octokit whose writes wait for their slot in the store, shared by every Lisa process. */
function paced<T extends Hooked>(
  octokit: T,
  how: { store: Store; installationId: number; app: Probot; waits: Set<(wait: LongWait) => void> },
): T {
  const pace = createWritePacer({
    slots: how.store.writeSlots,
    installationId: how.installationId,
    // Logged, and told to the port's listeners: a run shows it on its tracking comment.
    onLongWait: (wait) => {
      const count = wait.limitedBy === "hour" ? wait.hour : wait.minute;
      how.app.log.warn(
        wait,
        `waiting ${Math.round(wait.waitMs / 1000)} s for GitHub's content limit: ${count} writes this ${wait.limitedBy}`,
      );
      for (const listener of how.waits) listener(wait);
    },
  });
  return paceWrites(octokit as never, pace) as never;
}

/** An installation's Octokit whose every request to GitHub is counted, by method and status. */
function counted<T extends Hooked>(octokit: T, metrics: LisaMetrics): T {
  octokit.hook.after("request", (response, options) => {
    metrics.githubRequest(options.method, response.status);
  });
  octokit.hook.error("request", (error, options) => {
    metrics.githubRequest(options.method, asGitHubError(error)?.status ?? 0);
    throw error;
  });
  return octokit;
}
