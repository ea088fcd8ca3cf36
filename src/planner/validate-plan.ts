import path from "node:path";
import { z } from "zod";
import { AgentFileError, readAgentFile } from "../workspace/read-agent-file.ts";
import { PLAN_FILE, type Plan, planSchema } from "./plan-schema.ts";

export type PlanCheck = { ok: true; plan: Plan } | { ok: false; problems: string[] };

/** A plan is a list of pointers; one larger than this is not a plan. */
export const MAX_PLAN_BYTES = 256 * 1024;

/** Problems listed back to the planner and on the issue; a plan with more gets the first ones and a count. */
const MAX_PROBLEMS = 20;

/** At most MAX_PROBLEMS problems, then how many more there were. */
function capped(problems: string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `…and ${problems.length - MAX_PROBLEMS} more problems.`];
}

/**
 * Checks a plan against the configured repositories: the schema, then every repository is one of
 * them (by exact `owner/name`, so no paths and no traversal), none twice, and orders run 1..n.
 * Returns the plan with its steps sorted by order, or every problem found, each a sentence the
 * planner can act on.
 */
export function validatePlan(raw: unknown, configured: readonly string[]): PlanCheck {
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      problems: capped(
        z
          .prettifyError(parsed.error)
          .split("\n✖ ")
          .map((p) => p.replace(/^✖ /, "").replace(/\n\s+/g, " ")),
      ),
    };
  }
  const known = new Map(configured.map((repo) => [repo.toLowerCase(), repo]));
  const problems: string[] = [];
  const seen = new Set<string>();
  parsed.data.steps.forEach((step, i) => {
    const key = step.repo.toLowerCase();
    if (!known.has(key)) {
      problems.push(`steps[${i}].repo "${step.repo}" is not one of the configured repositories (${configured.join(", ")}).`);
    } else if (seen.has(key)) {
      problems.push(`steps[${i}].repo "${step.repo}" appears more than once; give each repository one step.`);
    }
    seen.add(key);
  });
  const orders = parsed.data.steps.map((s) => s.order).sort((a, b) => a - b);
  if (orders.some((order, i) => order !== i + 1)) {
    problems.push(`orders must be 1 to ${orders.length}, each once; got ${orders.join(", ")}.`);
  }
  if (problems.length) return { ok: false, problems: capped(problems) };
  const steps = [...parsed.data.steps]
    .sort((a, b) => a.order - b.order)
    .map((step) => ({ ...step, repo: known.get(step.repo.toLowerCase()) ?? step.repo }));
  return { ok: true, plan: { ...parsed.data, steps } };
}

/** Reads and validates `.lisa-plan.json` from a planning workspace: a regular file of at most 256 KiB. */
export async function readPlan(dir: string, configured: readonly string[]): Promise<PlanCheck> {
  let text: string | undefined;
  try {
    text = await readAgentFile(path.join(dir, PLAN_FILE), MAX_PLAN_BYTES);
  } catch (error) {
    if (!(error instanceof AgentFileError)) throw error;
    return { ok: false, problems: [error.message] };
  }
  if (text === undefined) {
    return { ok: false, problems: [`${PLAN_FILE} was not written at the root of the planning workspace.`] };
  }
  try {
    return validatePlan(JSON.parse(text), configured);
  } catch (error) {
    return { ok: false, problems: [`${PLAN_FILE} is not valid JSON: ${(error as Error).message}`] };
  }
}
