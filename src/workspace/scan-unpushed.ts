import { SecretInPushError } from "../errors.ts";
import { secretKindsIn } from "../markdown/redact-secrets.ts";
import { OUTPUT_LIMIT } from "../process/run-with-deadline.ts";
import { MIN_SECRET_LENGTH } from "../security/held-secrets.ts";
import { git } from "./git.ts";

/** More unpushed commits than this on one branch is no agent's work; Lisa refuses rather than scan them. */
const MAX_COMMITS = 500;

/** One secret in what is about to be pushed: which commit, where in it, and what kind (never the value). */
export interface SecretFinding {
  commit: string;
  where: string;
  kind: string;
}

/**
 * Refuses to push when the commits of `worktree` that no remote-tracking branch holds (those the
 * push would publish: the agent's, Lisa's own) carry a secret in a message or in an added line: one
 * of the values Lisa holds (installation tokens, model keys, the App's key and secrets), also when
 * re-wrapped, or anything shaped like a secret. A prompt-injected agent can be told to write the
 * key it found into a file; the sandbox keeps Lisa's own secrets from it, this keeps any it got
 * from reaching the repository.
 * @throws SecretInPushError saying where and what kind, for the issue
 */
export async function assertNothingSecretUnpushed(worktree: string, secrets: readonly string[]): Promise<void> {
  const commits = (await git(worktree, ["rev-list", `--max-count=${MAX_COMMITS + 1}`, "HEAD", "--not", "--remotes"]))
    .split("\n")
    .filter(Boolean);
  if (commits.length > MAX_COMMITS) {
    throw new SecretInPushError(`Lisa refused to push: more than ${MAX_COMMITS} new commits, too many to check for secrets.`);
  }
  const findings: SecretFinding[] = [];
  for (const commit of commits) findings.push(...(await scanCommit(worktree, commit, secrets)));
  if (findings.length > 0) throw new SecretInPushError(describe(findings));
}

async function scanCommit(worktree: string, commit: string, secrets: readonly string[]): Promise<SecretFinding[]> {
  // --text: a secret in a "binary" file is still a secret; no external diff or textconv program runs.
  const shown = await git(worktree, [
    "show",
    "--format=%B%x00",
    "--patch",
    "--text",
    "--unified=0",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-renames",
    commit,
  ]);
  const short = commit.slice(0, 7);
  if (shown.length >= OUTPUT_LIMIT) {
    return [{ commit: short, where: "its changes", kind: "more than can be checked for secrets" }];
  }
  const [message = "", patch = ""] = splitOnce(shown, "\0");
  const parts: { where: string; text: string }[] = [{ where: "its message", text: message }];
  // The file name is the agent's: it must not break out of the code span it is shown in.
  for (const [file, added] of addedLinesByFile(patch)) parts.push({ where: `\`${file.replaceAll("`", "'")}\``, text: added });
  return parts.flatMap(({ where, text }) => kindsIn(text, secrets).map((kind) => ({ commit: short, where, kind })));
}

/** What secrets `text` holds: held values (also with its whitespace removed, for a re-wrapped key) and secret shapes. */
function kindsIn(text: string, secrets: readonly string[]): string[] {
  const squeezed = text.replace(/\s+/g, "");
  const held = secrets.some(
    (secret) =>
      secret.length >= MIN_SECRET_LENGTH &&
      (text.includes(secret) || (secret.length >= 20 && squeezed.includes(secret.replace(/\s+/g, "")))),
  );
  return [...(held ? ["a secret Lisa holds (a key, a token or one of its own credentials)"] : []), ...secretKindsIn(text)];
}

/** The added lines of a patch, by the file they are added to. */
function addedLinesByFile(patch: string): Map<string, string> {
  const files = new Map<string, string>();
  let file = "";
  for (const line of patch.split("\n")) {
    if (line.startsWith("+++ ")) file = line.slice(4).replace(/^b\//, "");
    else if (line.startsWith("+")) files.set(file, `${files.get(file) ?? ""}${line.slice(1)}\n`);
  }
  return files;
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, ""] : [text.slice(0, at), text.slice(at + separator.length)];
}

function describe(findings: SecretFinding[]): string {
  const lines = findings.slice(0, 10).map((f) => `commit ${f.commit} adds ${f.kind} in ${f.where}`);
  const more = findings.length > 10 ? `; and ${findings.length - 10} more` : "";
  return `Lisa refused to push, so nothing was published: ${lines.join("; ")}${more}. Remove it from the branch's history (and revoke it if it is real).`;
}
