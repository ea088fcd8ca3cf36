import { defuseReferences, hasClosingKeyword } from "../../markdown/live-text.ts";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import { git } from "../../workspace/git.ts";

/** Who Lisa's commits are by: the App's bot account. */
export interface Identity {
  name: string;
  email: string;
}

// Trailers that credit or sign for someone: GitHub shows co-authors on the commit and the PR, and a
// sign-off certifies the work (DCO). Any case, any spacing around the words and the colon.
const CREDIT_TRAILER =
  /^[ \t]*(?:co[ \t_-]*authored|signed[ \t_-]*off|reviewed|acked|tested|reported|suggested|helped)[ \t_-]*by[ \t]*:/i;

/** More unpushed commits than this is no agent's work (the push scan's own limit). */
const MAX_COMMITS = 500;

/** A message longer than this is no commit message; what is kept of it still fits on a command line. */
const MAX_MESSAGE = 16_000;

/**
 * A commit message Lisa will publish: normalized and redacted (redactSecrets), lines that credit or
 * sign for someone dropped, and a line with a closing keyword has it (and its references) defused,
 * so no agent commit closes an issue when it reaches the default branch, the run's own included:
 * Lisa's `Closes` is in the PR body. A message of Lisa's own comes out unchanged.
 */
export function ownMessage(message: string, secrets: readonly string[]): string {
  const lines = redactSecrets(message.slice(0, MAX_MESSAGE), secrets)
    .split("\n")
    .filter((line) => !CREDIT_TRAILER.test(line))
    .map((line) => (hasClosingKeyword(line) ? defuseReferences(line) : line));
  const text = lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return text || "Work by the agent";
}

interface RawCommit {
  tree: string;
  parents: string[];
  author: string;
  committer: string;
  /** Headers besides these (a signature, an encoding): Lisa does not publish them. */
  others: boolean;
  message: string;
}

function parseCommit(raw: string): RawCommit {
  const end = raw.indexOf("\n\n");
  const headers = (end === -1 ? raw : raw.slice(0, end)).split("\n");
  const commit: RawCommit = { tree: "", parents: [], author: "", committer: "", others: false, message: "" };
  for (const header of headers) {
    const [key = "", ...rest] = header.split(" ");
    const value = rest.join(" ");
    if (key === "tree") commit.tree = value;
    else if (key === "parent") commit.parents.push(value);
    else if (key === "author") commit.author = value;
    else if (key === "committer") commit.committer = value;
    else commit.others = true;
  }
  commit.message = end === -1 ? "" : raw.slice(end + 2);
  return commit;
}

/** `Name <email>` of an author or committer header, without its date. */
const who = (header: string) => header.replace(/ \d+ [+-]\d{4}$/, "");

/**
 * Makes Lisa the author and committer of every commit of `worktree` that no remote-tracking branch
 * holds (those a push would publish), with a message from `ownMessage` (`secrets` redacted from it): same trees, parents mapped
 * to the rewritten ones, no signatures. Commits already so are kept as they are. The worktree's
 * branch then points at the rewritten head, whose tree is the one it had, so the work goes on from
 * there. Replace refs are not followed: Lisa rewrites the objects that are there.
 * @returns how many commits were rewritten
 */
export async function ownCommits(worktree: string, lisa: Identity, secrets: readonly string[]): Promise<number> {
  const local = ["--no-replace-objects"];
  const shas = (
    await git(worktree, [
      ...local,
      "rev-list",
      `--max-count=${MAX_COMMITS + 1}`,
      "--reverse",
      "--topo-order",
      "HEAD",
      "--not",
      "--remotes",
    ])
  )
    .split("\n")
    .filter(Boolean);
  // The push scan refuses that many itself, saying why.
  if (shas.length === 0 || shas.length > MAX_COMMITS) return 0;
  const head = (await git(worktree, [...local, "rev-parse", "--verify", "HEAD"])).trim();
  const ours = `${lisa.name} <${lisa.email}>`;
  const rewritten = new Map<string, string>();
  let count = 0;
  for (const sha of shas) {
    const commit = parseCommit(await git(worktree, [...local, "cat-file", "commit", sha]));
    const parents = commit.parents.map((parent) => rewritten.get(parent) ?? parent);
    const message = ownMessage(commit.message, secrets);
    const unchanged =
      !commit.others &&
      who(commit.author) === ours &&
      who(commit.committer) === ours &&
      parents.every((parent, i) => parent === commit.parents[i]) &&
      // git() returns the object without its final newline, which ends every message.
      message === commit.message;
    if (unchanged) continue;
    const identity = ["-c", `user.name=${lisa.name}`, "-c", `user.email=${lisa.email}`];
    const parentArgs = parents.flatMap((parent) => ["-p", parent]);
    const created = await git(worktree, [...identity, ...local, "commit-tree", commit.tree, ...parentArgs, "-m", message]);
    rewritten.set(sha, created.trim());
    count += 1;
  }
  const newHead = rewritten.get(head);
  if (newHead) await git(worktree, [...local, "update-ref", "-m", "Lisa owns the commits it publishes", "HEAD", newHead, head]);
  return count;
}
