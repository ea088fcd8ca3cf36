import type { GitHubReader, RepoRef } from "./github-port.ts";

/** Roles that may start and steer Lisa. `maintain` and `admin` include write. */
export const WRITE_ROLES: ReadonlySet<string> = new Set(["write", "maintain", "admin"]);

/** Whether `login` may steer Lisa on this repository. */
export async function isWriter(gh: GitHubReader, ref: RepoRef, login: string): Promise<boolean> {
  return WRITE_ROLES.has(await gh.roleOf(ref, login));
}
