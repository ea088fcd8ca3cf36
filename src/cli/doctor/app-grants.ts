import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";

/** What an App or installation holds: its permissions by name and the events it receives. */
export interface Grants {
  permissions?: Record<string, string | undefined> | undefined;
  events?: string[] | undefined;
}

/** The permissions and events app.yml asks for, which the registered App must hold for every feature to work. */
export async function manifestGrants(): Promise<Required<Grants>> {
  const manifest = parseYaml(await readFile(new URL("../../../app.yml", import.meta.url), "utf8")) as {
    default_permissions?: Record<string, string>;
    default_events?: string[];
  };
  return { permissions: manifest.default_permissions ?? {}, events: manifest.default_events ?? [] };
}

/** The permissions and events `wanted` asks for that `held` lacks, as `name: level` and event names. */
export function missingGrants(wanted: Required<Grants>, held: Grants): { permissions: string[]; events: string[] } {
  const rank = (level: string | undefined) => (level === "write" || level === "admin" ? 2 : level === "read" ? 1 : 0);
  return {
    permissions: Object.entries(wanted.permissions)
      .filter(([name, level]) => rank(held.permissions?.[name]) < rank(level))
      .map(([name, level]) => `${name}: ${level}`),
    events: wanted.events.filter((event) => !held.events?.includes(event)),
  };
}
