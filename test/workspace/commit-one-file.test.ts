import { symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { commitOneFile } from "../../src/workspace/commit-one-file.ts";
import { createRemote, gitIn, tempDir } from "../support/git-fixtures.ts";

/** A bare repository with `files` on main, whose config names a committer as a mirror's does. */
function bareWith(files: Record<string, string>, link?: { at: string; to: string }): string {
  const root = tempDir("commit-one-file");
  const bare = createRemote(root, "acme/api", "main", files);
  if (link) {
    // A link committed where the file goes: the commit must replace it, never follow it.
    const work = path.join(tempDir("link"), "w");
    gitIn(path.dirname(work), "clone", "--quiet", bare, work);
    symlinkSync(link.to, path.join(work, link.at));
    gitIn(work, "add", "--all");
    gitIn(work, "commit", "--quiet", "-m", "link");
    gitIn(work, "push", "--quiet", "origin", "HEAD:main");
  }
  gitIn(bare, "config", "user.name", "Lisa");
  gitIn(bare, "config", "user.email", "lisa@example.com");
  return bare;
}

describe("commitOneFile", () => {
  it("adds a file under folders the tree does not have yet, keeping every other path", async () => {
    const bare = bareWith({ "README.md": "# API\n", ".github/lisa.yml": "label: lisa\n" });
    const parent = gitIn(bare, "rev-parse", "main").trim();
    const commit = await commitOneFile(bare, {
      parent,
      file: ".github/lisa/memory.md",
      content: "- use our logger\n",
      message: "Lisa's memory",
    });
    expect(gitIn(bare, "rev-parse", `${commit}^`).trim()).toBe(parent);
    expect(gitIn(bare, "diff", "--name-only", parent, commit)).toBe(".github/lisa/memory.md\n");
    expect(gitIn(bare, "show", `${commit}:.github/lisa/memory.md`)).toBe("- use our logger\n");
    expect(gitIn(bare, "show", `${commit}:.github/lisa.yml`)).toBe("label: lisa\n");
    expect(gitIn(bare, "log", "-1", "--format=%an %s", commit).trim()).toBe("Lisa Lisa's memory");
  });

  it("replaces a link at the path with a plain file, and leaves what it pointed at alone", async () => {
    const bare = bareWith({ "README.md": "# API\n" }, { at: "memory.md", to: "README.md" });
    const parent = gitIn(bare, "rev-parse", "main").trim();
    const commit = await commitOneFile(bare, { parent, file: "memory.md", content: "- a line\n", message: "m" });
    expect(gitIn(bare, "ls-tree", commit, "memory.md").split(" ")[0]).toBe("100644");
    expect(gitIn(bare, "show", `${commit}:memory.md`)).toBe("- a line\n");
    expect(gitIn(bare, "show", `${commit}:README.md`)).toBe("# API\n");
  });
});
