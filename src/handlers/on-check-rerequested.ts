import type { CheckGesture } from "../commands/gesture.ts";
import { CHECK_NAME } from "../reporting/check-summary.ts";
import type { Triage } from "./payload-filters.ts";

interface RerequestedPart {
  id: number;
  head_sha: string;
  app?: { id: number } | null;
  pull_requests?: { number: number; head: { ref: string } }[];
}

interface CheckPayload {
  action?: string;
  installation?: { id: number };
  repository: { name: string; owner: { login: string } };
  sender: { login: string };
  check_run?: RerequestedPart & {
    name: string;
    conclusion?: string | null;
    output?: { title?: string | null; summary?: string | null };
  };
  check_suite?: RerequestedPart;
}

/**
 * Turns "Re-run" on Lisa's check run (`check_run.rerequested`), or "Re-run all" on her suite
 * (`check_suite.rerequested`), on a head of one of her pull requests into a gesture. Only her own
 * App's count: GitHub sends a rerequest to the App that made the check, and `appId` holds to that.
 */
export function onCheckRerequested(
  payload: CheckPayload,
  { appId, deliveryId }: { appId: number | undefined; deliveryId: string },
): Triage<CheckGesture> {
  if (payload.action !== "rerequested") return { ignored: `check ${payload.action}` };
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  const part = payload.check_run ?? payload.check_suite;
  if (!part) return { ignored: "neither a check run nor a check suite" };
  if (appId !== undefined && part.app?.id !== appId) return { ignored: "another App's check" };
  if (payload.check_run && payload.check_run.name !== CHECK_NAME)
    return { ignored: `not Lisa's check: ${payload.check_run.name}` };
  const pull = part.pull_requests?.find((pr) => pr.head.ref.startsWith("lisa/"));
  if (!pull) return { ignored: "not on one of Lisa's pull requests" };
  const run = payload.check_run;
  return {
    // Each press is its own: GitHub gives the run or suite and no time, so the delivery's id keys it.
    key: `check:${payload.check_run ? "run" : "suite"}:${part.id}:rerequested:${deliveryId}`,
    command: {
      kind: "check",
      action: "rerequested",
      installationId: payload.installation.id,
      owner: payload.repository.owner.login,
      repo: payload.repository.name,
      number: pull.number,
      isPullRequest: true,
      sender: payload.sender.login,
      headSha: part.head_sha,
      checkRunId: run ? run.id : null,
      shown: run
        ? { conclusion: run.conclusion ?? null, title: run.output?.title ?? null, summary: run.output?.summary ?? null }
        : null,
    },
  };
}
