import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processesMatching } from "../../dev/processes-matching.ts";
import { GitError } from "../../src/errors.ts";
import { assertWorktreeOf, git } from "../../src/workspace/git.ts";
import { createRemote, gitIn, tempDir } from "../support/git-fixtures.ts";
import { isAlive } from "../support/process-alive.ts";

const TOKEN = "ghs_gitTokenThatOnlyTheRemoteMaySee0000000000";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** An HTTP "remote" that calls `onRequest` and then answers 404, or never answers when `stall` is set. */
async function remote(options: { stall?: boolean; onRequest?: (headers: IncomingHttpHeaders) => void }): Promise<string> {
  server = createServer((request, response) => {
    options.onRequest?.(request.headers);
    if (options.stall) return;
    response.statusCode = 404;
    response.end();
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/acme/api.git`;
}

describe("git", () => {
  it("sends the installation token as a header, from no environment, argument or file a process could read", async () => {
    const seen: { authorization?: string; environ: string[]; cmdline: string[] }[] = [];
    const url = await remote({
      onRequest: (headers) => {
        // While git waits for this answer, look at every git process it runs.
        const pids = processesMatching(url);
        seen.push({
          authorization: headers.authorization,
          environ: pids.map((pid) => readFileSync(`/proc/${pid}/environ`, "utf8")),
          cmdline: pids.map((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8")),
        });
      },
    });
    const before = readdirSync(tmpdir()).filter((name) => name.startsWith("lisa-git-auth-"));

    await expect(git(tempDir("git-cwd"), ["ls-remote", url], { token: TOKEN })).rejects.toThrow(GitError);

    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString("base64");
    expect(seen[0]?.authorization).toBe(`Basic ${basic}`);
    expect(seen[0]?.environ.length).toBeGreaterThan(0);
    for (const text of [...(seen[0]?.environ ?? []), ...(seen[0]?.cmdline ?? [])]) {
      expect(text).not.toContain(basic);
      expect(text).not.toContain(TOKEN);
    }
    // The config holding the header was deleted as soon as git's descriptor was open.
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith("lisa-git-auth-"))).toEqual(before);
  });

  it("redacts the token from git's error message", async () => {
    const url = await remote({});
    const error = await git(tempDir("git-cwd"), ["ls-remote", `${url}?${TOKEN}`], { token: TOKEN }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).message).toMatch(/^git ls-remote failed in /);
    expect((error as GitError).message).not.toContain(TOKEN);
  });

  it("stops a network command whose remote stalls at its deadline, git's helpers included", async () => {
    const url = await remote({ stall: true });
    const started = Date.now();
    const error = await git(tempDir("git-cwd"), ["ls-remote", url], { token: TOKEN, timeoutMs: 1_500 }).catch((e: unknown) => e);
    expect((error as GitError).message).toMatch(/^git ls-remote failed in .*: it did not finish within 2s and was stopped$/);
    expect(Date.now() - started).toBeLessThan(4_000);
    for (let i = 0; i < 40 && processesMatching(url).some(isAlive); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(processesMatching(url)).toEqual([]);
  });

  it("returns the output without its final newline", async () => {
    const mirror = createRemote(tempDir("remote"), "acme/api", "main", { "README.md": "# API\n" });
    expect(await git(mirror, ["rev-parse", "--abbrev-ref", "HEAD"])).toBe("main");
  });
});

describe("assertWorktreeOf", () => {
  it("accepts a worktree whose git data is in the mirror", async () => {
    const mirror = createRemote(tempDir("remote"), "acme/api", "main", { "README.md": "# API\n" });
    const worktree = path.join(tempDir("worktrees"), "wt");
    gitIn(mirror, "worktree", "add", "--quiet", "-b", "lisa/1", worktree, "main");
    await expect(assertWorktreeOf(mirror, worktree)).resolves.toBeUndefined();
  });

  it("refuses a worktree whose `.git` an agent pointed at a repository of its own", async () => {
    const mirror = createRemote(tempDir("remote"), "acme/api", "main", { "README.md": "# API\n" });
    const worktree = path.join(tempDir("worktrees"), "wt");
    gitIn(mirror, "worktree", "add", "--quiet", "-b", "lisa/1", worktree, "main");
    const planted = createRemote(tempDir("planted"), "evil/repo", "main", { "x.txt": "x\n" });
    writeFileSync(path.join(worktree, ".git"), `gitdir: ${planted}\n`);
    await expect(assertWorktreeOf(mirror, worktree)).rejects.toThrow(/does not belong to .*; Lisa will not use it\.$/);
  });
});
