import { code } from "./untrusted.ts";

/** `4m 12s`, `1h 3m` or `9s`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h ? `${h}h ${m}m` : m ? `${m}m ${s}s` : `${s}s`;
}

/** `$0.84`; a cost under a cent is `<$0.01`, not `$0.00` beside a total of `$0.01`. */
export const money = (usd: number) => (usd > 0 && usd < 0.005 ? "<$0.01" : `$${usd.toFixed(2)}`);

/** `3 commits`, `1 commit`, with thousands separated. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** The 7-character short SHA as a code span; anything that is not a SHA is shown as plain code. */
export function shortSha(sha: string): string {
  return /^[0-9a-f]{7,64}$/i.test(sha) ? `\`${sha.slice(0, 7)}\`` : code(sha, { max: 40 });
}

// GitHub logins: letters, digits and single inner hyphens, at most 39 characters.
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

/** `@login` for a login of GitHub's shape (a mention); anything else, bots included, as code. */
export function mention(login: string): string {
  return LOGIN.test(login) ? `@${login}` : code(login || "unknown", { max: 60 });
}

/** `owner/name` as plain text when it has GitHub's shape, else as code. */
export function repoName(repo: string): string {
  return /^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/.test(repo) ? repo : code(repo, { max: 120 });
}
