import type { Store } from "../store/store.ts";
import type { LisaConfig } from "./config-schema.ts";
import { parseConfig } from "./parse-config.ts";

/** Each row's configuration as validated: a row read once is validated once, however often it is asked. */
const validated = new WeakMap<object, LisaConfig>();

/** The configuration a run's or a pass's row holds (the store decodes it; this validates it). */
export function configOf(row: { config: unknown }): LisaConfig {
  const known = validated.get(row);
  if (known) return known;
  const config = parseConfig(row.config);
  validated.set(row, config);
  return config;
}

/** The configuration in force for the run's current pass (the run's own before passes existed). */
export async function readConfigOf(store: Store, runId: number): Promise<LisaConfig> {
  const row = (await store.passes.current(runId)) ?? (await store.runs.get(runId));
  return row ? configOf(row) : parseConfig({});
}
