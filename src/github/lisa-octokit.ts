import { ProbotOctokit } from "probot";

/** How often one request hit by a secondary rate limit is sent again, each after GitHub's `retry-after`. */
export const SECONDARY_LIMIT_RETRIES = 2;

interface ThrottledRequest {
  method: string;
  url: string;
}

/**
 * Throttling answers for Lisa's Octokit. Probot as `npm start` runs it only logs a secondary rate
 * limit and gives up, so one burst of writes failed a whole run; Lisa waits as GitHub says and
 * sends the request again, twice at most, before the error reaches the run (which then fails
 * with a comment, or a command, which is tried again later).
 */
export const throttleRetries = {
  onSecondaryRateLimit: (
    retryAfter: number,
    options: ThrottledRequest,
    octokit: { log: { warn(message: string): void } },
    retryCount: number,
  ) => {
    octokit.log.warn(`secondary rate limit on ${options.method} ${options.url}; try ${retryCount + 1} again in ${retryAfter} s`);
    return retryCount < SECONDARY_LIMIT_RETRIES;
  },
};

/**
 * A stand-in for plugin-throttling's Bottleneck groups that runs each job at once. Its write group
 * spaces an installation's writes 1 s apart and its notifications group 3 s, each per process;
 * Lisa paces writes for the whole fleet through the store instead (write-pacer.ts), no stricter
 * than GitHub asks.
 */
const unpaced = {
  key: () => ({
    schedule: (...args: unknown[]) => {
      const at = args.findIndex((arg) => typeof arg === "function");
      return Promise.resolve((args[at] as (...rest: unknown[]) => unknown)(...args.slice(at + 1)));
    },
  }),
};

/** What Lisa's requests name themselves with, first in `User-Agent`, as GitHub asks an App to. */
export const USER_AGENT_PREFIX = "lisa";
/** Lisa's name before the User-Agent Octokit would send, once (Probot applies defaults more than once). */
export const lisaUserAgent = (userAgent: string | undefined) =>
  userAgent === USER_AGENT_PREFIX || userAgent?.startsWith(`${USER_AGENT_PREFIX} `)
    ? userAgent
    : [USER_AGENT_PREFIX, userAgent].filter(Boolean).join(" ");

/**
 * ProbotOctokit with throttleRetries, without Octokit's own spacing of writes, and named Lisa in
 * its User-Agent. Probot applies its own defaults first (the function form of `defaults` on the
 * base class runs last), so these answers win over its.
 */
export const LisaOctokit = ProbotOctokit.defaults((options: { throttle?: object; userAgent?: string }) => ({
  ...options,
  userAgent: lisaUserAgent(options.userAgent),
  throttle: { ...options.throttle, ...throttleRetries, write: unpaced, notifications: unpaced },
}));
