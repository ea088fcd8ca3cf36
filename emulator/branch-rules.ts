import { paginate } from "./paginate.ts";
import type { Route, RouteRequest, RouteResponse } from "./router.ts";
import type { Repo } from "./state.ts";

type RepoRoute = (
  method: string,
  pattern: string,
  handler: (request: RouteRequest, repo: Repo) => RouteResponse | Promise<RouteResponse>,
) => Route;

/**
 * `GET /repos/{owner}/{repo}/rules/branches/{branch}`: the rules in force on a branch, as GitHub
 * answers them. A repository made with `requiredApprovals` or `rulesetChecks` has one ruleset, on
 * its default branch, with a `pull_request` rule asking for that many approvals and a
 * `required_status_checks` rule naming those checks; any other branch (one that does not exist
 * included, as on GitHub) has none: an empty list.
 */
export function branchRuleRoutes(repoRoute: RepoRoute, base: () => string): Route[] {
  return [
    repoRoute("GET", "/rules/branches/*branch", (request, repo) => {
      if (request.params.branch !== repo.defaultBranch) return paginate([], request, base());
      const source = { ruleset_source_type: "Repository", ruleset_source: repo.fullName, ruleset_id: 1 };
      const rules: object[] = [];
      if (repo.requiredApprovals)
        rules.push({
          type: "pull_request",
          ...source,
          parameters: {
            allowed_merge_methods: ["merge", "squash", "rebase"],
            dismiss_stale_reviews_on_push: true,
            require_code_owner_review: false,
            require_last_push_approval: false,
            required_approving_review_count: repo.requiredApprovals,
            required_review_thread_resolution: false,
          },
        });
      if (repo.rulesetChecks?.length)
        rules.push({
          type: "required_status_checks",
          ...source,
          parameters: {
            do_not_enforce_on_create: false,
            required_status_checks: repo.rulesetChecks.map((context) => ({ context })),
            strict_required_status_checks_policy: false,
          },
        });
      return paginate(rules, request, base());
    }),
  ];
}
