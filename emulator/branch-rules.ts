import type { Route, RouteRequest, RouteResponse } from "./router.ts";
import type { Repo } from "./state.ts";

type RepoRoute = (
  method: string,
  pattern: string,
  handler: (request: RouteRequest, repo: Repo) => RouteResponse | Promise<RouteResponse>,
) => Route;

/**
 * `GET /repos/{owner}/{repo}/rules/branches/{branch}`: the rules in force on a branch, as GitHub
 * answers them. A repository made with `requiredApprovals` has one ruleset, on its default branch,
 * with a `pull_request` rule asking for that many approvals; any other branch (one that does not
 * exist included, as on GitHub) has none: an empty list.
 */
export function branchRuleRoutes(repoRoute: RepoRoute): Route[] {
  return [
    repoRoute("GET", "/rules/branches/*branch", (request, repo) => {
      const branch = request.params.branch;
      if (!repo.requiredApprovals || branch !== repo.defaultBranch) return { status: 200, body: [] };
      return {
        status: 200,
        body: [
          {
            type: "pull_request",
            ruleset_source_type: "Repository",
            ruleset_source: repo.fullName,
            ruleset_id: 1,
            parameters: {
              allowed_merge_methods: ["merge", "squash", "rebase"],
              dismiss_stale_reviews_on_push: true,
              require_code_owner_review: false,
              require_last_push_approval: false,
              required_approving_review_count: repo.requiredApprovals,
              required_review_thread_resolution: false,
            },
          },
        ],
      };
    }),
  ];
}
