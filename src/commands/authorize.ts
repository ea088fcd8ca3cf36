import type { GitHubPort, RepoRef } from "../github/github-port.ts";

/** Roles that may start and steer Lisa. `maintain` and `admin` include write. */
export const WRITE_ROLES: ReadonlySet<string> = new Set(["write", "maintain", "admin"]);

/** Whether `login` may steer Lisa on this repository. */
export async function isWriter(gh: GitHubPort, ref: RepoRef, login: string): Promise<boolean> {
  return WRITE_ROLES.has(await gh.roleOf(ref, login));
}

/** Posts a reply once per delivery, found again by its marker if Lisa stopped after posting. */
export async function replyOnce(gh: GitHubPort, ref: RepoRef, issue: number, deliveryId: string, text: string): Promise<void> {
  const marker = `<!-- lisa:reply delivery=${deliveryId} -->`;
  if ((await gh.findComment(ref, issue, marker)) === undefined) await gh.createComment(ref, issue, `${marker}\n${text}`);
}
