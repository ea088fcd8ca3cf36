import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import type { CreateRepoOptions } from "../../emulator/github-emulator.ts";
import { RUN_STATES } from "../../src/store/transitions.ts";

// The review loop's common start (E2E tests): Lisa as deployed against the emulator, pass 1 of an
// issue delivered to one pull request and waiting for review.

export const REPO = "acme/api";
export const CONFIG = "label: lisa\ngates:\n  - test -f health.ts\n";

/** An agent's session that writes `text` to `file` and describes it. */
export const change = (file: string, text: string, manifest: object = {}): FakeInvocation => ({
  write: { [file]: `${text}\n` },
  manifest: { title: "Add a health endpoint", what: `${text}.`, ...manifest },
  result: `${text}: done.`,
});

/**
 * A repository with a writer (ann), a second writer (bob) and a reader (rita); ann labels an issue
 * and pass 1 runs. `started` is told of the Lisa before anything can fail, so the test stops it.
 * `more` sets the repository up further (its files, its CI) and Lisa (its live check's interval).
 */
export async function passOne(
  invocations: FakeInvocation[],
  config: string,
  started: (env: EmulatedLisa) => void,
  more: { repo?: Omit<CreateRepoOptions, "config">; liveCheckIntervalMs?: number; publishRetryMs?: number } = {},
) {
  const agent = createFakeClaude(invocations);
  const env = await startEmulatedLisa({
    claudeBinary: agent.binary,
    ...(more.liveCheckIntervalMs === undefined ? {} : { liveCheckIntervalMs: more.liveCheckIntervalMs }),
    ...(more.publishRetryMs === undefined ? {} : { publishRetryMs: more.publishRetryMs }),
  });
  started(env);
  const { github } = env;
  await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config, ...more.repo });
  github.addCollaborator(REPO, "ann", "write");
  github.addCollaborator(REPO, "bob", "maintain");
  github.addCollaborator(REPO, "rita", "read");
  const issue = await github.createIssue(REPO, { title: "Add a health endpoint", body: "Expose /health.", user: "ann" });
  await github.labelIssue(REPO, issue.number, "lisa", "ann");
  await env.settle();
  const [pull] = github.pulls(REPO);
  if (!pull) throw new Error("pass 1 opened no pull request");
  return { agent, github, issue, pull, env };
}

/** The run of the issue, whatever its state. */
export async function runOf(env: EmulatedLisa) {
  const [run] = await env.lisa.store.runs.inState(...RUN_STATES);
  if (!run) throw new Error("no run");
  return run;
}
