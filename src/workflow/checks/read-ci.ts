import type { LisaConfig } from "../../config/config-schema.ts";
import type { CiSnapshot, GitHubReader, RepoRef } from "../../github/github-port.ts";
import { CHECK_NAME } from "../../reporting/check-summary.ts";

/** A check that reported on the head, or one branch protection requires that has not yet. */
export interface CiCheck {
  name: string;
  kind: "check_run" | "status";
  state: "pending" | "passed" | "failed";
  conclusion: string | null;
  /** When it started reporting; the wait's deadline runs from the earliest. */
  since: string | null;
  checkRunId?: number;
  appId?: number | null;
}

/** Conclusions that let a pull request through, as branch protection reads them. */
const PASSING: ReadonlySet<string> = new Set(["success", "neutral", "skipped"]);
/**
 * The checks that count on `sha` (see checksThatCount). Check suites without a check run count for
 * nothing: GitHub makes one at every push for each App installed with `checks: write`, Dependabot's
 * and Lisa's own among them, and most stay queued and empty for good; waiting on them held every
 * gate up for as long as it waited.
 */
export async function readCi(
  gh: GitHubReader,
  ref: RepoRef,
  sha: string,
  { ci, required }: { ci: LisaConfig["ci"]; required: readonly string[] },
): Promise<{ checks: CiCheck[]; snapshot: CiSnapshot }> {
  const snapshot = await gh.ciOf(ref, sha);
  const reported: CiCheck[] = [
    ...snapshot.runs.map((run) => ({
      name: run.name,
      kind: "check_run" as const,
      state:
        run.status !== "completed"
          ? ("pending" as const)
          : PASSING.has(run.conclusion ?? "")
            ? ("passed" as const)
            : ("failed" as const),
      conclusion: run.conclusion,
      since: run.startedAt,
      checkRunId: run.id,
      appId: run.appId,
    })),
    ...snapshot.statuses.map((status) => ({
      name: status.context,
      kind: "status" as const,
      state:
        status.state === "pending"
          ? ("pending" as const)
          : status.state === "success"
            ? ("passed" as const)
            : ("failed" as const),
      conclusion: status.state,
      since: status.createdAt,
    })),
  ];
  return { checks: checksThatCount(reported, ci, required), snapshot };
}

/**
 * Which checks count: those `ci.checks` names, else those branch protection requires, else every
 * check that reports; never those `ci.ignore` names. A named check that has not reported is pending.
 */
export function checksThatCount(reported: CiCheck[], ci: LisaConfig["ci"], required: readonly string[]): CiCheck[] {
  // Lisa's own check is the review gate she opens after CI: required or named, she never waits for it.
  const ignored = new Set([...ci.ignore, CHECK_NAME]);
  const names = ci.checks ?? (required.length > 0 ? required : undefined);
  if (!names) return reported.filter((check) => !ignored.has(check.name));
  return names
    .filter((name) => !ignored.has(name))
    .map(
      (name) =>
        reported.find((check) => check.name === name) ?? {
          name,
          kind: "check_run",
          state: "pending",
          conclusion: null,
          since: null,
        },
    );
}
