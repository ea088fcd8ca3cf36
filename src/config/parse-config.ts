import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ConfigError } from "../errors.ts";
import { configSchema, type LisaConfig } from "./config-schema.ts";

export const CONFIG_PATH = ".github/lisa.yml";

/**
 * Validates the parsed contents of `.github/lisa.yml` (null when the file does not exist).
 * @throws ConfigError whose message lists each bad key and what is wrong with it
 */
export function parseConfig(raw: unknown): LisaConfig {
  const result = configSchema.safeParse(raw ?? {});
  if (!result.success) {
    throw new ConfigError(`\`${CONFIG_PATH}\` is not valid:\n${z.prettifyError(result.error)}`, {
      cause: result.error,
    });
  }
  return result.data;
}

/** Parses YAML text; a syntax error becomes a ConfigError that says where. */
export function parseConfigYaml(text: string): LisaConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`\`${CONFIG_PATH}\` is not valid YAML: ${(error as Error).message}`, { cause: error });
  }
  return parseConfig(raw);
}

/** The label a possibly invalid config asks for, so an invalid file can still be answered on the right label. */
export function labelOf(raw: unknown): string {
  const label = (raw as { label?: unknown } | null)?.label;
  return typeof label === "string" && label.length > 0 ? label : "lisa";
}
