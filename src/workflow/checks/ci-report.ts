import type { CiSnapshot, GitHubReader, RepoRef } from "../../github/github-port.ts";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import type { CiCheck } from "./read-ci.ts";

/** Annotations and log lines a fix prompt gets per failing check: enough to act on, bounded for the prompt. */
const MAX_ANNOTATIONS = 20;
const LOG_TAIL = 4_000;
const TEXT_LIMIT = 2_000;

/**
 * What failed in the head's CI (`snapshot`, as the wait last read it), for the next fix iteration:
 * each failing check's name, conclusion, summary, annotations (file:line) and the tail of its log
 * (its Actions job's log, else its own output text, or a status's description and link). All of it
 * is the CI's text, which anyone who can push a workflow writes: redacted here, fenced as data by
 * whoever shows it. With it, how the failures read for "the same way twice": the checks, their
 * conclusions and annotations, not the log's timestamps.
 */
export async function describeCiFailures(
  gh: GitHubReader,
  ref: RepoRef,
  snapshot: CiSnapshot,
  failed: CiCheck[],
  secrets: readonly string[],
): Promise<{ report: string; signature: string }> {
  const parts: string[] = [];
  const signature: string[] = [];
  for (const check of failed) {
    const annotations =
      check.checkRunId === undefined ? [] : await gh.checkAnnotations(ref, check.checkRunId, MAX_ANNOTATIONS).catch(() => []);
    signature.push(`${check.name}|${check.conclusion}|${annotations.join(";")}`);
    const lines = [
      `CI check: ${check.name} (${check.kind === "status" ? "commit status" : "check run"}), conclusion: ${check.conclusion ?? "none"}`,
    ];
    if (check.kind === "status") {
      const status = snapshot.statuses.find((s) => s.context === check.name);
      if (status?.description) lines.push(`Description: ${status.description}`);
      if (status?.targetUrl) lines.push(`Details: ${status.targetUrl}`);
    } else if (check.checkRunId !== undefined) {
      const run = snapshot.runs.find((r) => r.id === check.checkRunId);
      if (run?.title) lines.push(`Title: ${run.title}`);
      if (run?.summary) lines.push(`Summary: ${run.summary.slice(0, TEXT_LIMIT)}`);
      if (annotations.length) lines.push("Annotations:", ...annotations.map((a) => `  ${a}`));
      const log = await gh.jobLog(ref, check.checkRunId).catch(() => undefined);
      const tail = log ? failingTail(log) : run?.text?.slice(-TEXT_LIMIT);
      if (tail) lines.push(`${log ? "Log (the end of the failing job)" : "Output"}:`, tail);
    }
    parts.push(lines.join("\n"));
  }
  return { report: redactSecrets(parts.join("\n\n"), secrets), signature: signature.sort().join("\n") };
}

/** The log up to its first error line (the failing step's end), at most LOG_TAIL characters of it. */
function failingTail(log: string): string {
  const error = log.indexOf("##[error]");
  const end = error < 0 ? log.length : log.indexOf("\n", error) + 1 || log.length;
  return log.slice(0, end).slice(-LOG_TAIL).trimEnd();
}
