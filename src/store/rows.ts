import type { CiFailure, FileChange, GateLine, HumanCommit, PrGate } from "../records/columns.ts";
import type { Manifest } from "../records/manifest.ts";
import type { PassState, RunState, StepPhase, StepState } from "./transitions.ts";

export type { PassState, RunState, StepPhase, StepState };

/** `stopped`: a person ended it (`/lisa abort`, the pull request closed); `interrupted`: Lisa itself stopped. */
export type SessionState = "running" | "succeeded" | "failed" | "interrupted" | "stopped";
export type PrState = "open" | "closed" | "merged";

export interface RunRow {
  id: number;
  installation_id: number;
  owner: string;
  repo: string;
  issue_number: number;
  issue_title: string;
  issue_body: string;
  requested_by: string;
  /** The configuration the run started with, as read (src/config/run-config.ts validates it); each pass records the one in force for it. */
  config: unknown;
  /** The first pass's validated plan, as JSON. */
  plan: string | null;
  state: RunState;
  current_pass: number;
  comment_id: number | null;
  report_comment_id: number | null;
  restarts: number;
  error: string | null;
  /** The worker process that claimed the run last (its LISA_WORKER_NAME). */
  worker: string | null;
  /** 1 while the tracking comment lags the run: GitHub refused its last edit, which is written again. */
  tracking_owed: number;
  /** The id of the last state change (an event with `to_state`) whose GitHub side is all written. */
  published_event: number | null;
  created_at: number;
  updated_at: number;
  /** Set when the run reaches a terminal state (merged, closed). */
  finished_at: number | null;
}

export interface PassRow {
  id: number;
  run_id: number;
  number: number;
  trigger: "initial" | "redirect" | "review" | "continue";
  requested_by: string;
  state: PassState;
  /** JSON: the steps this pass touches and what each must do, once fixed. */
  plan: string | null;
  recommendation: "accept" | "continue" | "blocked" | null;
  /** The agents' proposed refinements for the next pass; null until the gate opens. */
  refinements: string[] | null;
  /** The agents' open questions for the reviewers; null until the gate opens. */
  open_questions: string[] | null;
  decision: string | null;
  decided_by: string | null;
  /** How the decision was taken, e.g. `approval acme/api#5@1a2b3c4` or `/lisa accept`. */
  decided_via: string | null;
  decided_at: number | null;
  /** The configuration in force for this pass, as read at its start (src/config/run-config.ts validates it). */
  config: unknown;
  started_at: number | null;
  finished_at: number | null;
}

export interface StepRow {
  id: number;
  run_id: number;
  /** 0 for the planning step of a multi-repository run, then 1, 2, … in plan order. */
  position: number;
  owner: string;
  repo: string;
  /** Resolved from the repository when the step starts, unless the config or payload named it. */
  base_branch: string | null;
  branch: string;
  /** What the plan asks of this repository in its latest pass; null for a single-repository run. */
  scope: string | null;
  /** The pass the cursor fields below belong to. */
  pass: number;
  /** Sessions before this iteration belong to earlier tries or passes. */
  iteration_base: number;
  state: StepState;
  phase: StepPhase;
  worktree: string | null;
  /** The worktree a CLI created itself with its native `--worktree`, once found. */
  native_worktree: string | null;
  /** Commit the branch stood at when this pass started on it, so a resumed step diffs against the same point. */
  start_sha: string | null;
  /** The agent's validated manifest, kept here once read because the file is deleted. */
  manifest: Manifest | null;
  /** The agent's last final message. */
  summary: string | null;
  /** The last gate results: command, whether it passed, and a failing one's output (a resumed fix session's, too). */
  gates: GateLine[] | null;
  /** Files changed against the base, kept to recompose the PR body later. */
  changed_files: FileChange[] | null;
  /** The CI failure the step's next session is to fix (ci-failure.ts), until one has. */
  ci_failure: CiFailure | null;
  pr_number: number | null;
  pr_url: string | null;
  pr_state: PrState | null;
  /** The PR head Lisa last saw or pushed. */
  head_sha: string | null;
  /** 1 while the PR is a draft Lisa made. */
  draft: number;
  /** The PR's part of the review gate as last read from GitHub (status, approvers, blockers). */
  gate: PrGate | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

export interface StepPassRow {
  id: number;
  step_id: number;
  pass_id: number;
  state: StepState;
  scope: string | null;
  start_sha: string | null;
  end_sha: string | null;
  /** Commits humans pushed that this pass built on. */
  human_shas: HumanCommit[] | null;
  /** Commits Lisa added in this pass. */
  commits: number;
  gates: GateLine[] | null;
  summary: string | null;
  manifest: Manifest | null;
  changed_files: FileChange[] | null;
  block_reason: string | null;
  wip_sha: string | null;
  package_comment_id: number | null;
}

export interface SessionRow {
  id: number;
  step_id: number;
  pass: number;
  iteration: number;
  purpose: "plan" | "implement" | "fix_gates" | "fix_judge" | "fix_ci" | "resume" | "revise" | "judge";
  provider: string;
  model: string | null;
  state: SessionState;
  cost_usd: number;
  turns: number | null;
  /** Process group of the agent while it runs, so a restarted Lisa can stop an orphan. */
  pid: number | null;
  /** Boot and start time of that process (processIdentity), to tell it from a later one with the same pid. */
  pid_identity: string | null;
  failure_kind: string | null;
  message: string | null;
  started_at: number;
  finished_at: number | null;
}

export type GuidanceSource = "command" | "review" | "inline" | "continue" | "fix";

export interface GuidanceRow {
  id: number;
  run_id: number;
  /** Null while queued for the next pass. */
  pass_id: number | null;
  delivery_id: string;
  source: GuidanceSource;
  owner: string | null;
  repo: string | null;
  /** Null: said on the issue. */
  pr_number: number | null;
  author: string;
  url: string | null;
  /** The review comment's id for inline guidance, so Lisa can answer in its thread. */
  github_id: number | null;
  path: string | null;
  line: number | null;
  diff_hunk: string | null;
  outdated: number;
  /** Sanitized and redacted. */
  body: string;
  status: "addressed" | "partly" | "not_addressed" | "not_applicable" | null;
  status_note: string | null;
  replied: number;
  created_at: number;
}

export interface EventRow {
  id: number;
  run_id: number;
  pass: number | null;
  kind: string;
  from_state: string | null;
  to_state: string | null;
  actor: string | null;
  detail: string | null;
  created_at: number;
}

export interface CommandRow {
  id: number;
  delivery_id: string;
  event_key: string | null;
  kind: string;
  /** The payload as the JSON text the MAC covers (command-mac.ts). */
  payload: string;
  /** The payload decoded, once, by the store; undefined when the text is not JSON. */
  request: unknown;
  state: "pending" | "done";
  outcome: string | null;
  created_at: number;
  finished_at: number | null;
  /** Tries that failed on a GitHub error worth retrying, and when the next may start. */
  attempts: number;
  not_before: number | null;
  /** HMAC of the row's signed fields (command-mac.ts); null on rows written before commands were signed. */
  mac: string | null;
  /** SURE_COMMAND, or UNSURE_COMMAND: handled after every surer command of other issues (commands.ts). */
  priority: number;
  /** The issue or pull request the command was said on (`owner/repo#n`, lowercase); null on older rows. */
  issue: string | null;
}

/** A config file as a worker last read it (config-cache.ts). Owner and repository are lower-cased. */
export interface RepoConfigRow {
  id: number;
  installation_id: number;
  owner: string;
  repo: string;
  path: string;
  /** GitHub's ETag of that read; null when the file was missing. */
  etag: string | null;
  /** The file's text; null when it was missing. */
  content: string | null;
  /** The Lisa label the repository's config resolved to, on the row of its own `.github/lisa.yml` only. */
  label: string | null;
  validated_at: number;
}
