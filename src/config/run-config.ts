import type { Store } from "../store/store.ts";
import type { LisaConfig } from "./config-schema.ts";
import { parseConfig } from "./parse-config.ts";

/** The configuration in force for the run's current pass (the run's own before passes existed). */
export async function readConfigOf(store: Store, runId: number): Promise<LisaConfig> {
  const raw = (await store.passes.current(runId))?.config ?? (await store.runs.get(runId))?.config ?? "{}";
  return parseConfig(JSON.parse(raw));
}
