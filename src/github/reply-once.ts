import type { GitHubPort, RepoRef } from "./github-port.ts";

/** Posts a reply once per delivery, found again by its marker if Lisa stopped after posting. */
export async function replyOnce(gh: GitHubPort, ref: RepoRef, issue: number, deliveryId: string, text: string): Promise<void> {
  const marker = `<!-- lisa:reply delivery=${deliveryId} -->`;
  if ((await gh.findComment(ref, issue, marker)) === undefined) await gh.createComment(ref, issue, `${marker}\n${text}`);
}
