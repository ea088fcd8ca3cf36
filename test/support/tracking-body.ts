import type { GitHubEmulator } from "../../emulator/github-emulator.ts";

/** The text of Lisa's tracking comment on an issue, as the emulator holds it; "" before there is one. */
export const trackingBody = (github: Pick<GitHubEmulator, "comments">, repo: string, issue: number): string =>
  github.comments(repo, issue).find((c) => c.body.includes("lisa:tracking"))?.body ?? "";
