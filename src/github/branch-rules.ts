import type { Octokit } from "@octokit/rest";
import { z } from "zod";
import { statusOf } from "./github-error.ts";
import type { RepoRef } from "./github-port.ts";
import { readAllPages } from "./read-all-pages.ts";

/** The rules in force on a branch; Lisa reads two kinds: approvals asked for, and checks required. */
const rulesSchema = z.array(
  z.looseObject({
    type: z.string(),
    parameters: z
      .looseObject({
        required_approving_review_count: z.number().int().nonnegative().optional(),
        required_status_checks: z.array(z.looseObject({ context: z.string() })).optional(),
      })
      .optional(),
  }),
);

export type BranchRule = z.infer<typeof rulesSchema>[number];

/**
 * The rules rulesets put on `branch` (`GET /repos/{o}/{r}/rules/branches/{branch}`), or undefined
 * when GitHub shows none to Lisa: no such repository (404) or no permission to read them (403).
 */
export async function branchRules(octokit: Octokit, ref: RepoRef, branch: string): Promise<BranchRule[] | undefined> {
  try {
    return rulesSchema.parse(await readAllPages(octokit, octokit.rest.repos.getBranchRules, { ...ref, branch }, (page) => page));
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 403) return undefined;
    throw error;
  }
}
