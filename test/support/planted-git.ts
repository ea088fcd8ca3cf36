import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createWorktree, type Worktree } from "../../src/workspace/create-worktree.ts";
import { syncMirror } from "../../src/workspace/sync-mirror.ts";
import { mirrorPath, type WorkspaceOptions } from "../../src/workspace/workspace-paths.ts";
import { createRemote, gitIn, tempDir } from "./git-fixtures.ts";

// What an agent can leave in git for Lisa to trust: objects, refs, identities, registrations and
// alternates it writes from inside its sandbox (where the worktree, and the mirror's `objects/`,
// `refs/`, `logs/`, `worktrees/` and `.claude/` are writable). Each attack runs plain git as the
// agent would, replace objects on, and says which bytes must not reach the remote.

export const REF = { owner: "acme", repo: "api" };
export const TOKEN = `ghs_${"t".repeat(36)}`;

/** Lisa's checkout of a fresh `acme/api`, as a step starts it: a mirror, and a worktree on the step's branch. */
export interface LisaCheckout {
  options: WorkspaceOptions;
  remote: string;
  mirror: string;
  worktree: Worktree;
}

export async function lisaCheckout(): Promise<LisaCheckout> {
  const root = tempDir("remote");
  const remote = createRemote(root, "acme/api", "main", { "README.md": "hello\n" });
  const options = {
    dataDir: tempDir("data"),
    gitBaseUrl: `file://${root}`,
    author: { name: "Lisa", email: "lisa@example.com" },
  };
  await syncMirror(options, REF, TOKEN);
  const worktree = await createWorktree(options, REF, { branch: "lisa/1-x", base: "main", dir: "run-1-step-1" });
  return { options, remote, mirror: mirrorPath(options, REF), worktree };
}

/** git as the agent runs it: its own identity, replace objects honoured, whatever `env` adds. */
export function agentGit(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Agent",
      GIT_AUTHOR_EMAIL: "agent@example.com",
      GIT_COMMITTER_NAME: "Agent",
      GIT_COMMITTER_EMAIL: "agent@example.com",
      ...env,
    },
  });
}

/** Whether any object the remote holds (reachable or not) contains `needle`. */
export function remoteHolds(remote: string, needle: string): boolean {
  const all = execFileSync("git", ["cat-file", "--batch-all-objects", "--batch"], { cwd: remote, maxBuffer: 1 << 28 });
  return all.toString("latin1").includes(needle);
}

/** A held value only the test knows, as a provider's model key is. */
export const KEY = `agent-model-key-${randomUUID()}`;

function commitFile(dir: string, file: string, content: string, env: Record<string, string> = {}, message = "work"): void {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), content);
  agentGit(dir, ["add", "--all"], env);
  agentGit(dir, ["commit", "--quiet", "-m", message], env);
}

export interface PlantedAttack {
  name: string;
  attempt: string;
  /** Plants the attack in the checkout, as the agent would; returns the bytes that must not reach the remote. */
  plant(checkout: LisaCheckout): string;
}

const percentEncoded = (text: string) => [...Buffer.from(text)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");

export const PUSH_ATTACKS: PlantedAttack[] = [
  {
    name: "replace-ref",
    attempt: "a commit holding the key, replaced by a clean one through refs/replace for everyone who reads it",
    plant({ worktree }) {
      const dir = worktree.path;
      commitFile(dir, "notes.txt", `${KEY}\n`);
      const parent = agentGit(dir, ["rev-parse", "HEAD~1"]).trim();
      const clean = agentGit(dir, ["commit-tree", `${parent}^{tree}`, "-p", parent, "-m", "work"]).trim();
      agentGit(dir, ["replace", "HEAD", clean]);
      return KEY;
    },
  },
  {
    name: "key-as-author-name",
    attempt: "the key as the name of a commit's author",
    plant({ worktree }) {
      commitFile(worktree.path, "a.txt", "1\n", { GIT_AUTHOR_NAME: KEY });
      return KEY;
    },
  },
  {
    name: "key-as-committer-email",
    attempt: "the key as a commit's committer email",
    plant({ worktree }) {
      commitFile(worktree.path, "a.txt", "1\n", { GIT_COMMITTER_EMAIL: `${KEY}@example.com` });
      return KEY;
    },
  },
  {
    name: "key-as-file-name",
    attempt: "the key as the name of an empty file",
    plant({ worktree }) {
      commitFile(worktree.path, `docs/${KEY}`, "");
      return KEY;
    },
  },
  {
    name: "key-in-tag-message",
    attempt: "the key in an annotated tag's message, with the worktree's HEAD pointing at the tag",
    plant({ worktree }) {
      const dir = worktree.path;
      commitFile(dir, "a.txt", "1\n");
      agentGit(dir, ["tag", "-a", "v9", "-m", `release ${KEY}`]);
      agentGit(dir, ["symbolic-ref", "HEAD", "refs/tags/v9"]);
      return KEY;
    },
  },
  {
    name: "key-in-note",
    attempt: "the key in a git note on the pushed commit",
    plant({ worktree }) {
      const dir = worktree.path;
      commitFile(dir, "a.txt", "1\n");
      agentGit(dir, ["notes", "add", "-m", `see ${KEY}`, "HEAD"]);
      return KEY;
    },
  },
  {
    name: "key-base64",
    attempt: "the key base64-encoded in a file, off the encoding's alignment",
    plant({ worktree }) {
      const encoded = Buffer.from(`k=${KEY}`).toString("base64");
      commitFile(worktree.path, "blob.txt", `${encoded}\n`);
      return encoded;
    },
  },
  {
    name: "key-hex",
    attempt: "the key hex-encoded (upper case) in a file",
    plant({ worktree }) {
      const encoded = Buffer.from(KEY).toString("hex").toUpperCase();
      commitFile(worktree.path, "blob.txt", `${encoded}\n`);
      return encoded;
    },
  },
  {
    name: "key-url-encoded",
    attempt: "the key URL-encoded, every byte as %XX, in a file",
    plant({ worktree }) {
      const encoded = percentEncoded(KEY);
      commitFile(worktree.path, "blob.txt", `https://example.com/?k=${encoded}\n`);
      return encoded;
    },
  },
  {
    name: "alternates",
    attempt: "an alternates file pointing at another repository's objects, and a commit naming one of them",
    plant({ mirror, worktree }) {
      // Another repository on the same host (another mirror, the data directory): the sandbox never shows it.
      const other = tempDir("other-mirror");
      gitIn(other, "init", "--quiet", "--bare");
      const privateText = `private source of another repository ${randomUUID()}\n`;
      const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: other, input: privateText }).toString().trim();
      writeFileSync(path.join(mirror, "objects", "info", "alternates"), `${path.join(other, "objects")}\n`);
      const dir = worktree.path;
      agentGit(dir, ["update-index", "--add", "--cacheinfo", `100644,${blob},stolen.txt`]);
      agentGit(dir, ["commit", "--quiet", "-m", "work"]);
      agentGit(dir, ["checkout", "--", "."]);
      return privateText;
    },
  },
  {
    name: "object-folder-link",
    attempt: "an object folder of the mirror turned into a link to another repository's, and a commit naming an object there",
    plant({ mirror, worktree }) {
      const other = tempDir("other-mirror");
      gitIn(other, "init", "--quiet", "--bare");
      const privateText = `private source of another repository ${randomUUID()}\n`;
      const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: other, input: privateText }).toString().trim();
      // The mirror's own objects in that folder come along, so only the link is the attack.
      const folder = path.join(mirror, "objects", blob.slice(0, 2));
      if (existsSync(folder)) cpSync(folder, path.join(other, "objects", blob.slice(0, 2)), { recursive: true });
      rmSync(folder, { recursive: true, force: true });
      symlinkSync(path.join(other, "objects", blob.slice(0, 2)), folder);
      const dir = worktree.path;
      agentGit(dir, ["update-index", "--add", "--cacheinfo", `100644,${blob},stolen.txt`]);
      agentGit(dir, ["commit", "--quiet", "-m", "work"]);
      agentGit(dir, ["checkout", "--", "."]);
      return privateText;
    },
  },
];
