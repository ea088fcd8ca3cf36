import type { LisaConfig } from "../config/config-schema.ts";
import { labelOf, parseConfig } from "../config/parse-config.ts";
import type { CoreDeps } from "../deps.ts";
import { ConfigError } from "../errors.ts";
import { GitHubError } from "../github/github-error.ts";
import { parseRepoRef } from "../github/github-port.ts";
import { WRITE_ROLES } from "../github/permissions.ts";
import { replyOnce } from "../publication/ensure-comment.ts";
import { reactToIssue } from "../publication/reactions.ts";
import type { NewStep } from "../store/store.ts";
import { branchName } from "../workspace/branch-name.ts";
import type { LabeledCommand } from "./gesture.ts";
import type { RunControls } from "./gesture-scene.ts";

/**
 * The steps a run starts with: a planning step when the config lists several repositories, else
 * the one repository's step (the issue's own when none is listed).
 */
function firstSteps(config: LisaConfig, command: LabeledCommand): NewStep[] {
  const issueRepo = `${command.owner}/${command.repo}`;
  const [only, ...more] = config.repos ?? [{ repo: issueRepo }];
  if (!only || more.length > 0) {
    const branch = branchName(command.issue.number, command.issue.title);
    return [{ position: 0, owner: command.owner, repo: command.repo, branch, baseBranch: null, scope: null }];
  }
  const { owner, repo } = parseRepoRef(only.repo);
  const branch = branchName(command.issue.number, command.issue.title, command, { owner, repo });
  // The payload names the issue repository's default branch; another repository's is looked up later.
  const known = only.repo.toLowerCase() === issueRepo.toLowerCase() ? command.defaultBranch : null;
  return [{ position: 1, owner, repo, branch, baseBranch: config.base_branch ?? known, scope: null }];
}

/**
 * Decides what a labeled issue means: nothing (another label), a reply (invalid config, no
 * permission), or a new queued run. Returns the outcome in words for the command log. `storedAt`:
 * when the label's command was stored, so a read of the config made since is not repeated.
 */
export async function startRun(
  deps: CoreDeps,
  deliveryId: string,
  command: LabeledCommand,
  controls: Pick<RunControls, "acknowledge">,
  storedAt?: number,
): Promise<string> {
  const gh = await deps.github(command.installationId);
  const ref = { owner: command.owner, repo: command.repo };
  const issue = command.issue.number;

  let raw: unknown = null;
  let config: ReturnType<typeof parseConfig>;
  try {
    // A read since the label was stored is as good as a new one (resolve-config.ts).
    raw = await gh.readConfig(ref, storedAt === undefined ? {} : { since: storedAt });
    config = parseConfig(raw);
  } catch (error) {
    // GitHub failing is not the file's fault: the worker tries the command again later.
    if (error instanceof GitHubError && error.transient) throw error;
    const problem =
      error instanceof ConfigError ? error.message : `\`.github/lisa.yml\` could not be read: ${(error as Error).message}`;
    if (command.label !== labelOf(raw)) return `ignored: another label (and ${problem})`;
    await replyOnce(
      gh,
      ref,
      issue,
      deliveryId,
      `Lisa cannot start: ${problem}\n\nFix the file on the default branch and label the issue again.`,
    );
    return "config invalid";
  }
  if (command.label !== config.label) return "ignored: another label";

  const role = await gh.roleOf(ref, command.sender);
  if (!WRITE_ROLES.has(role)) {
    await replyOnce(
      gh,
      ref,
      issue,
      deliveryId,
      `@${command.sender}, only people with write access to this repository can ask Lisa to work on an issue. A maintainer can add the \`${config.label}\` label instead.`,
    );
    return `denied: ${command.sender} has role ${role}`;
  }

  const run = await deps.store.runs.create(
    {
      installation_id: command.installationId,
      owner: command.owner,
      repo: command.repo,
      issue_number: issue,
      issue_title: command.issue.title,
      issue_body: command.issue.body,
      requested_by: command.sender,
      config: raw,
      delivery: deliveryId,
    },
    firstSteps(config, command),
  );
  if (!run) {
    const open = await deps.store.runs.latestFor(command.owner, command.repo, issue);
    // This very label made the run before a stop kept its command from being marked done: it is the
    // person's own run, not one to tell them about, and its 👀 may not have been written.
    if (open && (await deps.store.runs.createdBy(open.id)) === deliveryId) return acknowledged(open.id);
    if (open && open.state !== "merged" && open.state !== "closed") {
      await replyOnce(
        gh,
        ref,
        issue,
        deliveryId,
        `Run ${open.id} for this issue is still open (${open.state}, pass ${open.current_pass}). Steer it with \`/lisa redirect <what to change>\` on the issue or a pull request, or close its pull requests to end it.`,
      );
    }
    return "ignored: the issue already has an open run";
  }
  return acknowledged(run.id);

  // The run is queued whatever happens to the 👀, and does not wait for it to be written.
  function acknowledged(runId: number): string {
    controls.acknowledge(
      reactToIssue(gh, ref, issue, "eyes").catch((error) => deps.log.warn({ err: error }, "could not react to the label")),
    );
    return `queued run ${runId}`;
  }
}
