// Run in a mount namespace where `dir` is a small disk (small-disk.ts): a store there with a run
// whose tracking comment exists, the disk filled to the last byte, and publishTracking meeting
// GitHub refusing the edit. Prints what the store's write did on the full disk, what
// publishTracking logged, and what it threw. Usage: node publish-on-full-disk.ts <dir>
import { closeSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { CoreDeps } from "../../src/deps.ts";
import { GitHubError } from "../../src/github/github-error.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import { publishTracking } from "../../src/publication/publish-tracking.ts";
import { Store } from "../../src/store/store.ts";

const dir = process.argv[2] ?? "";
const file = path.join(dir, "lisa.db");
const store = new Store(file);
const run = await store.runs.create(
  {
    installation_id: 2,
    owner: "acme",
    repo: "api",
    issue_number: 1,
    issue_title: "Title",
    issue_body: "",
    requested_by: "ann",
    config: {},
  },
  [{ position: 1, owner: "acme", repo: "api", branch: "lisa/1-title", baseBranch: "main", scope: null }],
);
if (!run) throw new Error("no run");
await store.runs.recordTrackingComment(run.id, 7);
// An empty write-ahead log: the store's next write must grow it, as when the disk fills mid-run.
const other = new DatabaseSync(file);
other.exec("PRAGMA wal_checkpoint(TRUNCATE)");
other.close();
const filler = openSync(path.join(dir, ".filler"), "a");
for (let size = 64 * 1024; size > 0; ) {
  try {
    writeSync(filler, Buffer.alloc(size));
  } catch {
    size = Math.floor(size / 2);
  }
}
closeSync(filler);

let write = "written";
try {
  await store.runs.oweTracking(run.id, true);
} catch (error) {
  write = (error as Error).message;
}
const said: string[] = [];
const log = { info: () => {}, warn: (_: object, m: string) => said.push(m), error: (_: object, m: string) => said.push(m) };
const deps = { store, now: () => Date.now(), heldSecrets: [], log } as unknown as CoreDeps;
// A secondary rate limit: the edit is owed.
const refused = new GitHubError("You have exceeded a secondary rate limit", { status: 403, transient: true });
const gh = { updateComment: () => Promise.reject(refused) } as unknown as GitHubPort;
let threw: string | null = null;
await publishTracking(deps, gh, run.id).catch((error: Error) => {
  threw = error.message;
});
console.log(JSON.stringify({ write, said, threw }));
