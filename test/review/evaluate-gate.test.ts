import { describe, expect, it } from "vitest";
import {
  evaluatePullRequest,
  type GatePullRequest,
  type GateReview,
  type GateRules,
  gateVerdict,
  type PrStatus,
} from "../../src/review/evaluate-gate.ts";

const HEAD = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432";
const OLD = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";

let clock = 0;
/** A review as the REST list gives it; each one submitted a minute after the last unless `at` says when. */
const review = (user: string, state: GateReview["state"], extra: Partial<GateReview> & { at?: number } = {}): GateReview => {
  const { at, ...rest } = extra;
  clock = at ?? clock + 1;
  return {
    user,
    userType: "User",
    state,
    commitId: HEAD,
    submittedAt: new Date(Date.UTC(2026, 0, 1, 12, clock)).toISOString(),
    ...rest,
  };
};

const openPr = (reviews: GateReview[], extra: Partial<GatePullRequest> = {}): GatePullRequest => ({
  state: "open",
  merged: false,
  headSha: HEAD,
  reviews,
  ...extra,
});

const WRITERS = new Set(["ann", "bob", "carol", "lead", "alice"]);
const rules = (extra: Partial<GateRules> = {}): GateRules => ({
  isWriter: (login) => WRITERS.has(login.toLowerCase()),
  requester: "alice",
  excludeRequester: false,
  accept: "approval",
  ...extra,
});

describe("evaluatePullRequest", () => {
  it("is pending without reviews", () => {
    expect(evaluatePullRequest(openPr([]), rules())).toEqual({ status: "pending", approvers: [], blockers: [], stale: [] });
  });

  it("approves with one writer's approval at the head", () => {
    expect(evaluatePullRequest(openPr([review("ann", "APPROVED")]), rules())).toEqual({
      status: "approved",
      approvers: ["ann"],
      blockers: [],
      stale: [],
    });
  });

  it("ignores an approval of an older head and lists it as stale", () => {
    expect(evaluatePullRequest(openPr([review("ann", "APPROVED", { commitId: OLD })]), rules())).toEqual({
      status: "pending",
      approvers: [],
      blockers: [],
      stale: ["ann"],
    });
  });

  it("treats an approval without a commit as stale", () => {
    expect(evaluatePullRequest(openPr([review("ann", "APPROVED", { commitId: null })]), rules())).toMatchObject({
      status: "pending",
      stale: ["ann"],
    });
  });

  it("counts a fresh approval once the reviewer approves the new head", () => {
    const reviews = [review("ann", "APPROVED", { commitId: OLD }), review("ann", "APPROVED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toMatchObject({ status: "approved", approvers: ["ann"], stale: [] });
  });

  it("takes each reviewer's latest decision by submittedAt, whatever the order of the list", () => {
    const approved = review("bob", "APPROVED", { at: 10 });
    const requested = review("bob", "CHANGES_REQUESTED", { at: 5 });
    expect(evaluatePullRequest(openPr([approved, requested]), rules())).toMatchObject({
      status: "approved",
      approvers: ["bob"],
      blockers: [],
    });
    const later = review("bob", "CHANGES_REQUESTED", { at: 20 });
    expect(evaluatePullRequest(openPr([later, approved]), rules())).toMatchObject({
      status: "changes_requested",
      approvers: [],
      blockers: ["bob"],
    });
  });

  it("ignores COMMENTED reviews: a comment after an approval keeps the approval", () => {
    const reviews = [review("ann", "APPROVED"), review("ann", "COMMENTED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toMatchObject({ status: "approved", approvers: ["ann"] });
  });

  it("ignores COMMENTED reviews: a comment after a change request keeps blocking", () => {
    const reviews = [review("bob", "CHANGES_REQUESTED"), review("bob", "COMMENTED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toMatchObject({ status: "changes_requested", blockers: ["bob"] });
  });

  it("ignores a review still pending (not submitted)", () => {
    const reviews = [review("ann", "PENDING", { submittedAt: null })];
    expect(evaluatePullRequest(openPr(reviews), rules())).toMatchObject({ status: "pending", approvers: [] });
  });

  it("lets a dismissal cancel that reviewer's earlier change request", () => {
    const reviews = [review("bob", "CHANGES_REQUESTED"), review("bob", "DISMISSED"), review("ann", "APPROVED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toEqual({
      status: "approved",
      approvers: ["ann"],
      blockers: [],
      stale: [],
    });
  });

  it("lets a dismissal cancel that reviewer's earlier approval", () => {
    const reviews = [review("ann", "APPROVED"), review("ann", "DISMISSED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toEqual({ status: "pending", approvers: [], blockers: [], stale: [] });
  });

  it("does not let one reviewer's dismissal cancel another's decision", () => {
    const reviews = [review("bob", "CHANGES_REQUESTED"), review("ann", "DISMISSED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toMatchObject({ status: "changes_requested", blockers: ["bob"] });
  });

  it("blocks on a writer's latest change request even when others approved (rule 10)", () => {
    const reviews = [review("ann", "APPROVED"), review("bob", "CHANGES_REQUESTED"), review("carol", "APPROVED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toEqual({
      status: "changes_requested",
      approvers: ["ann", "carol"],
      blockers: ["bob"],
      stale: [],
    });
  });

  it("blocks on a change request made at an older head", () => {
    const reviews = [review("bob", "CHANGES_REQUESTED", { commitId: OLD }), review("ann", "APPROVED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toMatchObject({ status: "changes_requested", blockers: ["bob"] });
  });

  it("ignores reviews by people without write access (rule 4)", () => {
    const reviews = [review("mallory", "APPROVED"), review("eve", "CHANGES_REQUESTED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toEqual({ status: "pending", approvers: [], blockers: [], stale: [] });
  });

  it.each([
    ["a Bot account", review("ann", "APPROVED", { userType: "Bot" })],
    ["a [bot] login", review("lisa[bot]", "APPROVED")],
    ["a [bot] login in capitals", review("Renovate[BOT]", "CHANGES_REQUESTED")],
  ])("ignores a review by %s, even one the writer check would pass", (_who, bot) => {
    const pr = openPr([bot]);
    expect(evaluatePullRequest(pr, rules({ isWriter: () => true }))).toMatchObject({
      status: "pending",
      approvers: [],
      blockers: [],
    });
  });

  it("counts the requester's approval by default (E3)", () => {
    expect(evaluatePullRequest(openPr([review("alice", "APPROVED")]), rules())).toMatchObject({
      status: "approved",
      approvers: ["alice"],
    });
  });

  it("ignores the requester's approval with excludeRequester, whatever the case of the login", () => {
    const result = evaluatePullRequest(openPr([review("Alice", "APPROVED")]), rules({ excludeRequester: true }));
    expect(result).toEqual({ status: "pending", approvers: [], blockers: [], stale: [] });
  });

  it("still counts others' approvals with excludeRequester", () => {
    const reviews = [review("alice", "APPROVED"), review("ann", "APPROVED")];
    expect(evaluatePullRequest(openPr(reviews), rules({ excludeRequester: true }))).toMatchObject({
      status: "approved",
      approvers: ["ann"],
    });
  });

  it("treats logins case-insensitively: Ann and ann are one reviewer", () => {
    const reviews = [review("Ann", "CHANGES_REQUESTED"), review("ann", "APPROVED")];
    expect(evaluatePullRequest(openPr(reviews), rules())).toMatchObject({ status: "approved", approvers: ["ann"], blockers: [] });
  });

  it("reports a merged PR as merged, whatever its reviews", () => {
    const pr = openPr([review("bob", "CHANGES_REQUESTED")], { state: "closed", merged: true });
    expect(evaluatePullRequest(pr, rules())).toEqual({ status: "merged", approvers: [], blockers: [], stale: [] });
  });

  it("drops a PR closed without merging", () => {
    const pr = openPr([review("ann", "APPROVED")], { state: "closed" });
    expect(evaluatePullRequest(pr, rules())).toEqual({ status: "dropped", approvers: [], blockers: [], stale: [] });
  });

  describe('with accept: "github"', () => {
    const github = rules({ accept: "github" });
    const approved = () => [review("ann", "APPROVED")];

    it("keeps Lisa's rule when the base branch has no review rule (reviewDecision null)", () => {
      expect(evaluatePullRequest(openPr(approved(), { reviewDecision: null }), github).status).toBe("approved");
    });

    it("keeps Lisa's rule when reviewDecision was not read", () => {
      expect(evaluatePullRequest(openPr(approved()), github).status).toBe("approved");
    });

    it("waits while GitHub still requires a review (E2)", () => {
      expect(evaluatePullRequest(openPr(approved(), { reviewDecision: "REVIEW_REQUIRED" }), github)).toMatchObject({
        status: "pending",
        approvers: ["ann"],
      });
    });

    it("waits while GitHub says changes are requested by someone Lisa does not count", () => {
      expect(evaluatePullRequest(openPr(approved(), { reviewDecision: "CHANGES_REQUESTED" }), github).status).toBe("pending");
    });

    it("approves when GitHub agrees", () => {
      expect(evaluatePullRequest(openPr(approved(), { reviewDecision: "APPROVED" }), github).status).toBe("approved");
    });

    it("does not approve on GitHub's word alone", () => {
      expect(evaluatePullRequest(openPr([], { reviewDecision: "APPROVED" }), github).status).toBe("pending");
    });

    it("still blocks on a writer's change request", () => {
      const pr = openPr([review("bob", "CHANGES_REQUESTED")], { reviewDecision: "APPROVED" });
      expect(evaluatePullRequest(pr, github).status).toBe("changes_requested");
    });

    it("ignores reviewDecision with accept: approval", () => {
      expect(evaluatePullRequest(openPr(approved(), { reviewDecision: "REVIEW_REQUIRED" }), rules()).status).toBe("approved");
    });
  });
});

describe("gateVerdict", () => {
  it.each<[string, PrStatus[], ReturnType<typeof gateVerdict>]>([
    ["every PR approved", ["approved", "approved"], "accept"],
    ["one PR approved", ["approved"], "accept"],
    ["approved and merged", ["approved", "merged"], "accept"],
    ["approved and dropped", ["approved", "dropped"], "accept"],
    ["one PR still pending", ["approved", "pending"], "wait"],
    ["changes requested on one", ["approved", "changes_requested"], "wait"],
    ["merged and pending", ["merged", "pending"], "wait"],
    ["merged and changes requested", ["merged", "changes_requested"], "wait"],
    ["dropped and pending", ["dropped", "pending"], "wait"],
    ["every PR merged", ["merged", "merged"], "merged"],
    ["merged and dropped", ["merged", "dropped"], "merged"],
    ["every PR closed unmerged", ["dropped", "dropped"], "closed"],
    ["the one PR closed unmerged", ["dropped"], "closed"],
    ["no pull requests yet", [], "wait"],
  ])("with %s (%j) the verdict is %s", (_case, statuses, verdict) => {
    expect(gateVerdict(statuses)).toBe(verdict);
  });
});
