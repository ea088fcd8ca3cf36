import { SecretInPushError } from "../errors.ts";
import { normalizeText } from "../markdown/normalize-text.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { OUTPUT_LIMIT } from "../process/run-with-deadline.ts";
import { findSecrets } from "../security/find-secrets.ts";
import { git } from "./git.ts";

/** More unpushed commits than this on one branch is no agent's work; Lisa refuses rather than scan them. */
const MAX_COMMITS = 500;

/** More new objects than this in one push is no agent's work either. */
const MAX_OBJECTS = 50_000;

/** What is read of a push at most, safely below what one git command's output may hold. */
const MAX_BYTES = OUTPUT_LIMIT - 8 * 1024 * 1024;

/** One secret in what is about to be pushed: which commit, where in it, and what kind (never the value). */
export interface SecretFinding {
  commit: string;
  where: string;
  kind: string;
}

/**
 * Refuses to push `commit` (HEAD by default) from `worktree` when any object the push would send (those no
 * remote-tracking branch reaches: commits with their author, committer and message, every path in
 * every tree, every blob whole) carries a secret: one of the values Lisa holds (installation
 * tokens, model keys, the App's key and secrets), also re-wrapped or encoded in base64, hex or URL
 * encoding, or anything shaped like a secret. Objects are read raw and without replace objects
 * (see `git.ts`), so what is read is what goes over the wire. A prompt-injected agent can be told
 * to write the key it found into the repository; the sandbox keeps Lisa's own secrets from it,
 * this keeps any it got from reaching GitHub.
 * @throws SecretInPushError saying where and what kind, for the issue
 */
export async function assertNothingSecretUnpushed(worktree: string, secrets: readonly string[], commit = "HEAD"): Promise<void> {
  const commits = (await git(worktree, ["rev-list", `--max-count=${MAX_COMMITS + 1}`, commit, "--not", "--remotes"]))
    .split("\n")
    .filter(Boolean);
  if (commits.length > MAX_COMMITS) throw tooMuch(`more than ${MAX_COMMITS} new commits`);
  if (commits.length === 0) return;
  // What `git push` computes to send: every object reachable from the commit that the remote's branches do not reach.
  const listing = await git(worktree, ["rev-list", "--objects", "--no-object-names", commit, "--not", "--remotes"], {
    encoding: "latin1",
  });
  if (listing.length >= MAX_BYTES) throw tooMuch("more new objects than can be listed");
  const ids = [...new Set(listing.match(/^[0-9a-f]{40,64}$/gm) ?? [])];
  if (ids.length > MAX_OBJECTS) throw tooMuch(`more than ${MAX_OBJECTS} new objects`);
  const sizes = await git(worktree, ["cat-file", "--batch-check=%(objectsize)"], { input: `${ids.join("\n")}\n` });
  const bytes = sizes.split("\n").reduce((sum, size) => sum + (Number(size) || 0), 0);
  if (bytes + ids.length * 100 > MAX_BYTES) throw tooMuch(`more than ${Math.round(MAX_BYTES / 1024 / 1024)} MiB of new content`);
  const objects = parseBatch(await git(worktree, ["cat-file", "--batch"], { input: `${ids.join("\n")}\n`, encoding: "latin1" }));
  const places = await placesOf(worktree, commit);
  const findings: SecretFinding[] = [];
  for (const object of objects) {
    for (const { where, text } of partsOf(object, places, secrets)) {
      for (const kind of kindsIn(text, secrets))
        findings.push({ commit: places.commitOf.get(object.id) ?? `object ${object.id.slice(0, 7)}`, where, kind });
    }
  }
  if (findings.length > 0) throw new SecretInPushError(describe(findings));
}

interface GitObject {
  id: string;
  type: string;
  /** The object's bytes, one character per byte. */
  body: string;
}

/** The objects of `git cat-file --batch` output: a `<id> <type> <size>` line, then that many bytes. */
function parseBatch(output: string): GitObject[] {
  const objects: GitObject[] = [];
  let at = 0;
  while (at < output.length) {
    const end = output.indexOf("\n", at);
    const [id = "", type = "", size = ""] = output.slice(at, end === -1 ? undefined : end).split(" ");
    if (end === -1 || !/^\d+$/.test(size)) throw new SecretInPushError(`Lisa refused to push: git could not read object ${id}.`);
    objects.push({ id, type, body: output.slice(end + 1, end + 1 + Number(size)) });
    at = end + 1 + Number(size) + 1;
  }
  return objects;
}

/** Which commit brought each new object in, and at which path, to say where a secret is. */
interface Places {
  commitOf: Map<string, string>;
  pathOf: Map<string, string>;
}

async function placesOf(worktree: string, commit: string): Promise<Places> {
  const commitOf = new Map<string, string>();
  const pathOf = new Map<string, string>();
  // Oldest first, so an object is told as the change of the commit that first added it.
  const log = await git(
    worktree,
    ["log", "--reverse", "--raw", "-t", "--no-abbrev", "--no-renames", "-z", "--format=%x01%H %T", commit, "--not", "--remotes"],
    { encoding: "latin1" },
  );
  for (const chunk of log.split("\x01").filter(Boolean)) {
    const [head = "", ...rest] = chunk.split("\0");
    const [sha = "", tree = ""] = head.trim().split(/\s+/);
    const short = `commit ${sha.slice(0, 7)}`;
    commitOf.set(sha, short);
    if (!commitOf.has(tree)) commitOf.set(tree, short);
    for (let i = 0; i + 1 < rest.length; i += 2) {
      const id = rest[i]?.split(" ")[3];
      const file = rest[i + 1] ?? "";
      if (!id || commitOf.has(id)) continue;
      commitOf.set(id, short);
      pathOf.set(id, file);
    }
  }
  return { commitOf, pathOf };
}

/** The parts of an object that are looked at apart, each with where it is, for the refusal. */
function partsOf(object: GitObject, places: Places, secrets: readonly string[]): { where: string; text: string }[] {
  if (object.type === "commit") {
    const split = object.body.indexOf("\n\n");
    const headers = split === -1 ? object.body : object.body.slice(0, split);
    const message = split === -1 ? "" : object.body.slice(split + 2);
    const lines = headers.split("\n");
    const header = (name: string) => lines.filter((line) => line.startsWith(`${name} `)).join("\n");
    const others = lines.filter((line) => !/^(author|committer) /.test(line)).join("\n");
    return [
      { where: "its message", text: message },
      { where: "its author", text: header("author") },
      { where: "its committer", text: header("committer") },
      { where: "its headers", text: others },
    ];
  }
  if (object.type === "tree") return [{ where: "a file or folder name", text: treeNames(object.body).join("\n") }];
  if (object.type === "tag") return [{ where: "a tag", text: object.body }];
  // The file name is the agent's: it must neither break out of the code span it is shown in nor show a secret itself.
  const file = places.pathOf.get(object.id);
  const name = file === undefined ? "a file" : `\`${redactSecrets(file, secrets).replaceAll("`", "'")}\``;
  return [{ where: name, text: object.body }];
}

/** The entry names of a raw tree object: `<mode> <name>\0<binary id>` after one another. */
function treeNames(body: string): string[] {
  const names: string[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(" ", at);
    const nul = body.indexOf("\0", space);
    if (space === -1 || nul === -1) break;
    names.push(body.slice(space + 1, nul));
    // The id after the name is 20 bytes (SHA-1) or 32 (SHA-256); Lisa's mirrors use SHA-1.
    at = nul + 1 + 20;
  }
  return names;
}

// Printable ASCII and line breaks read the same normalized: only other bytes need the second look.
const PLAIN_TEXT = /^[\t\n\r\x20-\x7e]*$/;

/** What secrets `text` (an object's bytes, one character per byte) holds, as it is and as its UTF-8 text reads normalized. */
function kindsIn(text: string, secrets: readonly string[]): string[] {
  if (text.length === 0) return [];
  const kinds = new Set(findSecrets(text, secrets, { bytes: true, spans: false }).map((found) => found.kind));
  if (!PLAIN_TEXT.test(text)) {
    const read = normalizeText(Buffer.from(text, "latin1").toString("utf8"));
    for (const found of findSecrets(read, secrets, { spans: false })) kinds.add(found.kind);
  }
  return [...kinds];
}

function tooMuch(what: string): SecretInPushError {
  return new SecretInPushError(`Lisa refused to push: ${what}, too many to check for secrets.`);
}

function describe(findings: SecretFinding[]): string {
  const lines = findings.slice(0, 10).map((f) => `${f.commit} adds ${f.kind} in ${f.where}`);
  const more = findings.length > 10 ? `; and ${findings.length - 10} more` : "";
  return `Lisa refused to push, so nothing was published: ${lines.join("; ")}${more}. Remove it from the branch's history (and revoke it if it is real).`;
}
