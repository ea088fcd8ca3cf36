import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ownCommits, ownMessage } from "../../../src/workflow/step/own-commits.ts";
import { createRemote, gitIn, tempDir } from "../../support/git-fixtures.ts";

const LISA = { name: "Lisa", email: "lisa[bot]@users.noreply.github.com" };

/** A clone of a fresh bare remote on branch `lisa/3-x`: `origin/main` is published, what is committed here is not. */
function clone(): { dir: string; remote: string } {
  const remote = createRemote(tempDir("remotes"), "acme/api", "main", { "README.md": "# API\n" });
  const dir = path.join(tempDir("clone"), "api");
  gitIn(path.dirname(dir), "clone", "--quiet", remote, dir);
  gitIn(dir, "checkout", "--quiet", "-b", "lisa/3-x");
  return { dir, remote };
}

/** Commits `file` as `who` with `message`, as an agent in the sandbox can. */
function commitAs(dir: string, who: { name: string; email: string }, file: string, message: string): void {
  writeFileSync(path.join(dir, file), `${file}\n`);
  gitIn(dir, "-c", `user.name=${who.name}`, "-c", `user.email=${who.email}`, "-c", "commit.gpgsign=false", "add", "--all");
  gitIn(
    dir,
    "-c",
    `user.name=${who.name}`,
    "-c",
    `user.email=${who.email}`,
    "commit",
    "--quiet",
    "--author",
    `${who.name} <${who.email}>`,
    "-m",
    message,
  );
}

const AGENT_MESSAGE = [
  "Add health",
  "",
  "Fixes other-org/repo#1",
  "closes: #99",
  "Resolved https://github.com/other-org/repo/issues/7",
  "Closes #3",
  "Refs #3 for context.",
  "",
  "Co-authored-by: Mallory <mallory@evil.example>",
  "  signed-off-by :Mallory <mallory@evil.example>",
  "Co-Authored-By: Eve <eve@evil.example>",
  "Reviewed-by: Eve <eve@evil.example>",
  "ACKED-BY: Eve <eve@evil.example>",
  "Tested-by: Eve <eve@evil.example>",
  "Reported-by: Eve <eve@evil.example>",
  "Suggested-by: Eve <eve@evil.example>",
  "Helped-by: Eve <eve@evil.example>",
  "Co-\u200Bauthored-by: Hidden <h@evil.example>",
].join("\n");

describe("ownMessage", () => {
  it("drops lines that credit or sign for someone and defuses every closing keyword, the run's own included", () => {
    const message = ownMessage(AGENT_MESSAGE, []);
    expect(message).not.toMatch(/-by\s*:/i);
    expect(message).not.toMatch(/(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+\S*(?:#\d|https:)/i);
    // The words stay readable; GitHub no longer acts on them.
    expect(message).toContain("F\u200Bixes other-org/repo#\u200B1");
    expect(message).toContain("Refs #3 for context.");
    expect(message.startsWith("Add health\n\n")).toBe(true);
  });

  it("keeps a message of Lisa's own byte for byte", () => {
    const lisa = "Add a health check\n\nMade by Lisa for acme/api#3, pass 1.";
    expect(ownMessage(lisa, [])).toBe(lisa);
    const defused = "F\u200Bixes #\u200B1 properly\n\nMade by Lisa for acme/api#3, pass 1.";
    expect(ownMessage(defused, [])).toBe(defused);
  });
});

describe("ownCommits", () => {
  it("rewrites what a push would publish: Lisa's identity, clean messages, same trees, parents remapped; the branch follows", async () => {
    const { dir, remote } = clone();
    const stranger = { name: "Mallory", email: "mallory@evil.example" };
    commitAs(dir, stranger, "a.ts", AGENT_MESSAGE);
    // A side branch merged back, so a rewritten commit has two rewritten parents.
    gitIn(dir, "checkout", "--quiet", "-b", "side", "HEAD");
    commitAs(dir, stranger, "b.ts", "Side work\n\nSigned-off-by: Mallory <mallory@evil.example>");
    gitIn(dir, "checkout", "--quiet", "lisa/3-x");
    commitAs(dir, LISA, "c.ts", "Add a health check\n\nMade by Lisa for acme/api#3, pass 1.");
    gitIn(
      dir,
      "-c",
      "user.name=Mallory",
      "-c",
      "user.email=mallory@evil.example",
      "merge",
      "--quiet",
      "--no-ff",
      "-m",
      "Merge\n\nFixes #42",
      "side",
    );
    const before = {
      tree: gitIn(dir, "rev-parse", "HEAD^{tree}").trim(),
      count: gitIn(dir, "rev-list", "--count", "HEAD").trim(),
    };

    expect(await ownCommits(dir, LISA, [])).toBe(4);

    // Same work, same shape, on the same branch, with nothing left to commit.
    expect(gitIn(dir, "rev-parse", "HEAD^{tree}").trim()).toBe(before.tree);
    expect(gitIn(dir, "rev-list", "--count", "HEAD").trim()).toBe(before.count);
    expect(gitIn(dir, "rev-list", "--count", "--merges", "HEAD").trim()).toBe("1");
    expect(gitIn(dir, "symbolic-ref", "HEAD").trim()).toBe("refs/heads/lisa/3-x");
    expect(gitIn(dir, "status", "--porcelain")).toBe("");
    // Already Lisa's: a second pass changes nothing.
    const head = gitIn(dir, "rev-parse", "HEAD").trim();
    expect(await ownCommits(dir, LISA, [])).toBe(0);
    expect(gitIn(dir, "rev-parse", "HEAD").trim()).toBe(head);

    gitIn(dir, "push", "--quiet", remote, "HEAD:refs/heads/lisa/3-x");
    const received = gitIn(remote, "log", "--format=%an <%ae>|%cn <%ce>%n%B", "main..lisa/3-x");
    expect(received).not.toContain("mallory@evil.example");
    expect(received).not.toContain("eve@evil.example");
    expect(received).not.toMatch(/-by\s*:/i);
    expect(received).not.toMatch(/(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?[ \t]+\S*(?:#\d|https:)/i);
    expect(received).toContain("Made by Lisa for acme/api#3, pass 1.");
    const identities = gitIn(remote, "log", "--format=%an <%ae>|%cn <%ce>", "main..lisa/3-x").trim().split("\n");
    expect(new Set(identities)).toEqual(new Set([`${LISA.name} <${LISA.email}>|${LISA.name} <${LISA.email}>`]));
  });

  it("leaves published commits alone", async () => {
    const { dir } = clone();
    const published = gitIn(dir, "rev-parse", "HEAD").trim();
    expect(await ownCommits(dir, LISA, [])).toBe(0);
    expect(gitIn(dir, "rev-parse", "HEAD").trim()).toBe(published);
  });
});
