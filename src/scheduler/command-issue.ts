import type { Gesture, LabeledCommand } from "../commands/gesture.ts";
import type { CommandRow } from "../store/rows.ts";
import type { Store } from "../store/store.ts";

/**
 * The issue a stored command is about, as a key: commands with one key are handled one at a time.
 * A gesture on one of a run's pull requests is about the run's issue, which may be in another
 * repository; a row that cannot be read is about nothing else.
 */
export async function issueOfCommand(store: Store, command: Pick<CommandRow, "id" | "kind" | "payload">): Promise<string> {
  let payload: unknown;
  try {
    payload = JSON.parse(command.payload);
  } catch {
    return `command:${command.id}`;
  }
  return issueOfPayload(store, { id: command.id, kind: command.kind, payload });
}

/** The same, for a command whose payload is at hand (just stored), not read back from its row. */
export async function issueOfPayload(store: Store, command: { id: number; kind: string; payload: unknown }): Promise<string> {
  const payload = (command.payload ?? {}) as Partial<Gesture & LabeledCommand>;
  const { owner, repo } = payload;
  const number = command.kind === "start_run" ? payload.issue?.number : payload.number;
  if (typeof owner !== "string" || typeof repo !== "string" || typeof number !== "number") return `command:${command.id}`;
  const run = payload.isPullRequest ? (await store.steps.byPullRequest(owner, repo, number))?.run : undefined;
  return run ? issueKey(run.owner, run.repo, run.issue_number) : issueKey(owner, repo, number);
}

/** The key of a run's issue, as its commands have it. */
export const issueOfRun = (run: { owner: string; repo: string; issue_number: number }) =>
  issueKey(run.owner, run.repo, run.issue_number);

// GitHub's owner and repository names are case-insensitive.
const issueKey = (owner: string, repo: string, number: number) => `${owner}/${repo}#${number}`.toLowerCase();
