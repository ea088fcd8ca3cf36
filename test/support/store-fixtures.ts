import type { NewRun, Store } from "../../src/store/store.ts";

/** A run asked for on issue `issue` of acme/api, as the store receives it. */
export const newRun = (issue: number, requestedBy = "alice"): NewRun => ({
  installation_id: 2,
  owner: "acme",
  repo: "api",
  issue_number: issue,
  issue_title: "Title",
  issue_body: "",
  requested_by: requestedBy,
  config: {},
});

/** The one step of a single-repository run on issue `issue`. */
export const oneStep = (issue: number) => [
  { position: 1, owner: "acme", repo: "api", branch: `lisa/${issue}-title`, baseBranch: "main", scope: null },
];

/** Takes a step through its phases up to its pull request, as the workflow would. */
export async function buildThrough(store: Store, stepId: number): Promise<void> {
  for (const phase of ["agent", "gates", "commit", "push", "pull_request"] as const) await store.steps.enterPhase(stepId, phase);
}
