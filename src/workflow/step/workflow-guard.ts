import { code } from "../../reporting/untrusted.ts";
import { squashUnpublished, workflowChanges } from "../../workspace/workflow-changes.ts";
import { BlockedError, type RunContext } from "../context/run-context.ts";

// Lisa's App does not ask for the `workflows` permission (a workflow runs with the repository's
// secrets), so GitHub refuses any push of hers whose new commits change `.github/workflows/`. She
// looks before she pushes and blocks the step with a reason a person can act on.

/** How many file names a reason lists; the tracking comment shows 200 characters of it. */
const NAMED = 3;

/** GitHub's refusal, in git's `! [remote rejected]` line: the workflow it names. */
const REFUSAL = /refusing to allow a GitHub App to create or update workflow `([^`\n]*)` without `workflows` permission/i;

/** Why the step's work was not pushed: the workflow files it changes (agent-chosen names, escaped), and what to do. */
export function workflowBlockReason(files: readonly string[]): string {
  const named = files.slice(0, NAMED).map((file) => code(file, { max: 80 }));
  const more = files.length > NAMED ? ` and ${files.length - NAMED} more` : "";
  return (
    `The agent changed ${named.join(", ")}${more}, and Lisa's GitHub App may not push workflow changes. ` +
    "`/lisa fix <notes>` has the agent undo them, or push the workflow change yourself."
  );
}

/** The workflow GitHub's refusal of a push names, or undefined when `message` is no such refusal. */
export function refusedWorkflow(message: string): string | undefined {
  return REFUSAL.exec(message)?.[1];
}

/**
 * Before a push of the step's work: commits that change a workflow on the way but not in the end
 * (a change a later session undid) are squashed into one, which GitHub accepts; a workflow still
 * changed blocks the step, and nothing is pushed.
 * @throws BlockedError naming the workflow files
 */
export async function keepWorkflowsUnpushed(ctx: RunContext, dir: string): Promise<void> {
  const changes = await workflowChanges(dir);
  if (changes.touched.length === 0) return;
  if (changes.net.length === 0 && changes.linear) {
    await squashUnpublished(dir, ctx.deps.workspace.author, { base: changes.base });
    return;
  }
  throw new BlockedError(workflowBlockReason(changes.net.length ? changes.net : changes.touched));
}

/**
 * Before the push of a blocked attempt to the WIP branch: its workflow changes are left out, all its
 * unpublished commits squashed into one on the last published commit, so GitHub takes the rest of
 * the attempt (a commit that changes a workflow and one that undoes it would still be refused).
 * `/lisa fix` resumes from there; a person who wants the workflow change pushes it themselves.
 * @returns the workflow files left out, none when the attempt changes no workflow
 */
export async function dropWorkflowChanges(ctx: RunContext, dir: string): Promise<string[]> {
  const changes = await workflowChanges(dir);
  if (changes.touched.length === 0) return [];
  await squashUnpublished(dir, ctx.deps.workspace.author, {
    base: changes.base,
    drop: changes.touched,
    note: "Lisa left out the attempt's changes under .github/workflows/: her GitHub App may not push workflow changes.",
  });
  return changes.touched;
}
