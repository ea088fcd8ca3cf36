import type { Store } from "../store/store.ts";
import type { LisaConfig } from "./config-schema.ts";
import { parseConfig } from "./parse-config.ts";

/** The configuration in force for the run's current pass (the run's own before passes existed). */
export function readConfigOf(store: Store, runId: number): LisaConfig {
  const raw = store.currentPass(runId)?.config ?? store.run(runId)?.config ?? "{}";
  return parseConfig(JSON.parse(raw));
}
