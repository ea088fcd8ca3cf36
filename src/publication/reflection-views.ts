import type { PackageView } from "../reporting/package-view.ts";
import type { ReflectionRow } from "../store/store.ts";

/** Reflections as the review package and the tracking comment show them. */
export function reflectionViews(rows: readonly ReflectionRow[]): NonNullable<PackageView["reflections"]> {
  return rows.map((r) => ({ iteration: r.iteration, gate: r.gate, whatFailed: r.what_failed, cause: r.cause, change: r.change }));
}
