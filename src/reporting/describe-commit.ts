import { mention, shortSha } from "./format.ts";
import { cleanLine } from "./untrusted.ts";
import type { CommitView } from "./views.ts";

/** `` `77aa11a` @bob "fix typo" `` */
export function describeCommit(commit: CommitView, secrets: readonly string[]): string {
  return `${shortSha(commit.sha)} ${mention(commit.author)} "${cleanLine(commit.subject, { secrets, max: 120 })}"`;
}
