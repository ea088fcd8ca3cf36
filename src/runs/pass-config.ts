import type { LisaConfig } from "../config/config-schema.ts";
import { parseConfig } from "../config/parse-config.ts";
import type { Store } from "../store/store.ts";

/** The configuration in force for the run's current pass (the run's own before passes existed). */
export function readConfigOf(store: Store, runId: number): LisaConfig {
  const raw = store.currentPass(runId)?.config ?? store.run(runId)?.config ?? "{}";
  return parseConfig(JSON.parse(raw));
}
