/** Where the `lisa` command asks GitHub's REST API: GitHub Enterprise Server's when GHE_HOST is set, as Probot does. */
export const apiBaseUrl = (env: NodeJS.ProcessEnv) =>
  env.GHE_HOST ? `${env.GHE_PROTOCOL || "https"}://${env.GHE_HOST}/api/v3` : "https://api.github.com";

/** Octokit's log, silenced: the command reports failures in its own words. */
export const quietLog = { debug() {}, info() {}, warn() {}, error() {} };
