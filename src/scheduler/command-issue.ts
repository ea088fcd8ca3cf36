import type { Gesture, LabeledCommand } from "../commands/gesture.ts";
import type { CommandRow } from "../store/rows.ts";
import type { Store } from "../store/store.ts";

/**
 * The issue a stored command is about, as a key: commands with one key are handled one at a time.
 * A gesture on one of a run's pull requests is about the run's issue, which may be in another
 * repository; a row that cannot be read is about nothing else.
 */
export async function issueOfCommand(store: Store, command: Pick<CommandRow, "id" | "kind" | "request">): Promise<string> {
  if (command.request === undefined) return `command:${command.id}`;
  return issueOfPayload(store, { id: command.id, kind: command.kind, payload: command.request });
}

/** The same, for a command whose payload is at hand (just stored), not read back from its row. */
export async function issueOfPayload(store: Store, command: { id: number; kind: string; payload: unknown }): Promise<string> {
  const said = saidOn(command.kind, command.payload);
  if (!said) return `command:${command.id}`;
  const run = said.isPullRequest ? (await store.steps.byPullRequest(said.owner, said.repo, said.number))?.run : undefined;
  return run ? issueKey(run.owner, run.repo, run.issue_number) : issueKey(said.owner, said.repo, said.number);
}

/** The key of the issue or pull request a command was said on, read from its payload alone (no run looked up). */
export function saidOnKey(kind: string, payload: unknown): string | null {
  const said = saidOn(kind, payload);
  return said ? issueKey(said.owner, said.repo, said.number) : null;
}

function saidOn(kind: string, payload: unknown) {
  const { owner, repo, issue, number, isPullRequest } = (payload ?? {}) as Partial<Gesture & LabeledCommand>;
  const n = kind === "start_run" ? issue?.number : number;
  if (typeof owner !== "string" || typeof repo !== "string" || typeof n !== "number") return undefined;
  return { owner, repo, number: n, isPullRequest };
}

/** The key of a run's issue, as its commands have it. */
export const issueOfRun = (run: { owner: string; repo: string; issue_number: number }) =>
  issueKey(run.owner, run.repo, run.issue_number);

// GitHub's owner and repository names are case-insensitive.
const issueKey = (owner: string, repo: string, number: number) => `${owner}/${repo}#${number}`.toLowerCase();
