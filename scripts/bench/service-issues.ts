import type { ScaledLisa } from "../../dev/scaled-lisa.ts";

/**
 * `count` repositories `bench/service-N`, each with one gate and an issue for alice (a writer): one
 * repository per run, as the workers share one process and with it the per-repository git lock that
 * separate worker processes would each have their own of.
 */
export async function serviceIssues(github: ScaledLisa["github"], count: number): Promise<{ repo: string; number: number }[]> {
  const issues = [];
  for (let i = 0; i < count; i++) {
    const repo = `bench/service-${i + 1}`;
    await github.createRepo(repo, {
      files: { "README.md": "# Service\n" },
      config: "label: lisa\ngates:\n  - test -f change.txt\n",
    });
    github.addCollaborator(repo, "alice", "write");
    issues.push({ repo, ...(await github.createIssue(repo, { title: `Change ${i + 1}`, user: "alice" })) });
  }
  return issues;
}
