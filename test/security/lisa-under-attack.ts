// Lisa under attack, in a process of its own so its environment holds real secrets: runs one
// session of the hostile agent through the real runAgent, then (as Lisa does after a session) a git
// command with an installation token, against a remote that takes a while to answer. Prints what
// happened as one JSON line. Its file name is what the agent looks for among the host's processes.
// Usage: node lisa-under-attack.ts '<json options>'
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { processesMatching } from "../../dev/processes-matching.ts";
import { buildAgentEnv } from "../../src/providers/agent-env.ts";
import { claudeProvider } from "../../src/providers/claude.ts";
import { runAgent } from "../../src/providers/run-agent.ts";
import { git } from "../../src/workspace/git.ts";
import type { AttackRun, World } from "./sandbox-cases.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as {
  world: World;
  mode: "bwrap" | "off";
  agent: string;
  token: string;
  marker: string;
};
const { world, token } = options;

const remote = createServer((_request, response) => {
  setTimeout(() => {
    response.statusCode = 404;
    response.end();
  }, 2_500);
});
await new Promise<void>((resolve) => remote.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/acme/api.git`;

const identity = {
  GIT_AUTHOR_NAME: "Agent",
  GIT_AUTHOR_EMAIL: "a@example.com",
  GIT_COMMITTER_NAME: "Agent",
  GIT_COMMITTER_EMAIL: "a@example.com",
};
const prompt = Object.entries({
  LISA_PID: String(process.pid),
  DATA_DIR: world.dataDir,
  MIRROR: world.mirror,
  VAULT: world.vault,
  LISA_CWD: process.cwd(),
  LISA_HOME: process.env.HOME ?? "",
  WORKTREE: world.worktree,
  MARKER: options.marker,
})
  .map(([key, value]) => `${key}=${value}\n`)
  .join("");

const result = await runAgent({
  provider: claudeProvider,
  binary: options.agent,
  model: undefined,
  cwd: world.worktree,
  prompt,
  env: buildAgentEnv(process.env, claudeProvider.env, identity, [token]),
  timeoutMs: 60_000,
  stallMs: 60_000,
  sandbox: { mode: options.mode, mirrors: [world.mirror] },
});
const child = `hostile-child-${options.marker}`;
const survivors = processesMatching(child);

await git(mkdtempSync(path.join(tmpdir(), "lisa-fetch-")), ["ls-remote", url], { token }).catch(() => undefined);
await new Promise((resolve) => setTimeout(resolve, 500));
const stolenFile = path.join(world.worktree, "stolen.txt");
const reportFile = path.join(world.worktree, "attack-report.txt");
const run: AttackRun = {
  ok: result.ok,
  report: existsSync(reportFile) ? readFileSync(reportFile, "utf8") : "",
  survivors,
  stolen: existsSync(stolenFile) ? readFileSync(stolenFile, "utf8") : null,
};
// Without the sandbox the child is still out there; it must not outlive the test.
for (const pid of processesMatching(child)) process.kill(pid, "SIGKILL");
remote.close();
process.stdout.write(`${JSON.stringify(run)}\n`);
process.exit(0);
