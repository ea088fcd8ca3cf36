import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { PLAN_FILE, type Plan, planSchema } from "./plan-schema.ts";

export type PlanCheck = { ok: true; plan: Plan } | { ok: false; problems: string[] };

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
      problems: z
        .prettifyError(parsed.error)
        .split("\n✖ ")
        .map((p) => p.replace(/^✖ /, "").replace(/\n\s+/g, " ")),
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
  if (problems.length) return { ok: false, problems };
  const steps = [...parsed.data.steps]
    .sort((a, b) => a.order - b.order)
    .map((step) => ({ ...step, repo: known.get(step.repo.toLowerCase()) ?? step.repo }));
  return { ok: true, plan: { ...parsed.data, steps } };
}

/** Reads and validates `.lisa-plan.json` from a planning workspace. */
export async function readPlan(dir: string, configured: readonly string[]): Promise<PlanCheck> {
  let text: string;
  try {
    text = await readFile(path.join(dir, PLAN_FILE), "utf8");
  } catch {
    return { ok: false, problems: [`${PLAN_FILE} was not written at the root of the planning workspace.`] };
  }
  try {
    return validatePlan(JSON.parse(text), configured);
  } catch (error) {
    return { ok: false, problems: [`${PLAN_FILE} is not valid JSON: ${(error as Error).message}`] };
  }
}
