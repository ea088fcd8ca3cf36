import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";

/** Requests that change something on GitHub; minting an installation token is not one. */
const isWrite = (request: { method: string; path: string }) =>
  request.method !== "GET" && !request.path.endsWith("/access_tokens");

export async function writesPerRun(): Promise<void> {
  const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } }]);
  const env: EmulatedLisa = await startEmulatedLisa({ claudeBinary: agent.binary });
  try {
    const { github } = env;
    await github.createRepo("bench/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("bench/api", "alice", "write");
    const issue = await github.createIssue("bench/api", { title: "Add a health endpoint", user: "alice" });
    const before = github.requests().length;
    await github.labelIssue("bench/api", issue.number, "lisa", "alice");
    await env.settle();
    const writes = github.requests().slice(before).filter(isWrite);
    console.log(
      `GitHub writes of a single-repository run, label to review gate: ${writes.length} (goal ≤ 8: ${writes.length <= 8 ? "met" : "missed"})`,
    );
    for (const write of writes) console.log(`  ${write.method} ${write.path} → ${write.status}`);
  } finally {
    await env.stop();
  }
}
