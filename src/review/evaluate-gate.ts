/**
 * The review gate as a pure function. It is recomputed from the
 * REST reviews on every relevant event and at start-up instead of adding up webhooks, because
 * GitHub neither orders webhooks nor redelivers them on its own.
 */

export type PrStatus = "approved" | "pending" | "changes_requested" | "merged" | "dropped";

export interface GateReview {
  user: string;
  userType: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";
  commitId: string | null;
  submittedAt: string | null;
}

export interface GatePullRequest {
  state: "open" | "closed";
  merged: boolean;
  headSha: string;
  reviews: GateReview[];
  /** GraphQL `reviewDecision`, read only with `review.accept: github`; null when the base has no review rule. */
  reviewDecision?: string | null;
}

export interface GateRules {
  /** Whether a login has write, maintain or admin on the pull request's repository. */
  isWriter(login: string): boolean;
  requester: string;
  /** `review.exclude_requester`: the requester's own approval does not count. */
  excludeRequester: boolean;
  /** `approval`: Lisa's rule alone; `github`: GitHub's `reviewDecision` must say APPROVED too. */
  accept: "approval" | "github";
}

export interface PrGateResult {
  status: PrStatus;
  /** Writers whose latest decision is an approval at the current head. */
  approvers: string[];
  /** Writers whose latest decision is a change request, whatever the commit. */
  blockers: string[];
  /** Writers whose latest decision approves an older head: they must approve again. */
  stale: string[];
}

const DECISIONS: ReadonlySet<GateReview["state"]> = new Set(["APPROVED", "CHANGES_REQUESTED", "DISMISSED"]);

/** One pull request's part of the gate: the latest decision per writer, bound to the head SHA. */
export function evaluatePullRequest(pr: GatePullRequest, rules: GateRules): PrGateResult {
  if (pr.merged) return { status: "merged", approvers: [], blockers: [], stale: [] };
  if (pr.state === "closed") return { status: "dropped", approvers: [], blockers: [], stale: [] };
  const latest = new Map<string, GateReview>();
  const ordered = [...pr.reviews].sort((a, b) => (a.submittedAt ?? "").localeCompare(b.submittedAt ?? ""));
  for (const review of ordered) {
    if (!DECISIONS.has(review.state)) continue;
    const login = review.user.toLowerCase();
    if (review.userType === "Bot" || login.endsWith("[bot]")) continue;
    if (!rules.isWriter(review.user)) continue;
    if (rules.excludeRequester && login === rules.requester.toLowerCase()) continue;
    latest.set(login, review);
  }
  const decisions = [...latest.values()];
  const approvers = decisions.filter((r) => r.state === "APPROVED" && r.commitId === pr.headSha).map((r) => r.user);
  const stale = decisions.filter((r) => r.state === "APPROVED" && r.commitId !== pr.headSha).map((r) => r.user);
  const blockers = decisions.filter((r) => r.state === "CHANGES_REQUESTED").map((r) => r.user);
  let status: PrStatus = blockers.length ? "changes_requested" : approvers.length ? "approved" : "pending";
  // With `accept: github`, GitHub's own rule (required approvals, code owners) must agree; null means no rule.
  if (status === "approved" && rules.accept === "github" && pr.reviewDecision != null && pr.reviewDecision !== "APPROVED") {
    status = "pending";
  }
  return { status, approvers, blockers, stale };
}

export type GateVerdict = "accept" | "wait" | "merged" | "closed";

/**
 * The run's gate over its pull requests: accept when none is pending or has changes requested and
 * at least one is approved or merged; merged when every PR that counts is merged; closed when all
 * were closed unmerged.
 */
export function gateVerdict(statuses: readonly PrStatus[]): GateVerdict {
  const counted = statuses.filter((s) => s !== "dropped");
  if (counted.length === 0) return statuses.length ? "closed" : "wait";
  if (counted.every((s) => s === "merged")) return "merged";
  if (counted.some((s) => s === "pending" || s === "changes_requested")) return "wait";
  return "accept";
}
