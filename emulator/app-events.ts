import { readFileSync } from "node:fs";
import { parse } from "yaml";

/** app.yml, the manifest Lisa's App is registered with: the emulator holds Lisa to what it asks for. */
function manifest(): { default_events?: unknown; default_permissions?: unknown } {
  return parse(readFileSync(new URL("../app.yml", import.meta.url), "utf8")) ?? {};
}

/**
 * The events Lisa's App subscribes to: `default_events` of app.yml. The emulator sends no other,
 * so a handler for an event the App never gets fails its test.
 */
export function subscribedEvents(): string[] {
  const events = manifest().default_events;
  if (!Array.isArray(events) || !events.every((event) => typeof event === "string")) {
    throw new Error("app.yml has no list of default_events");
  }
  return events;
}

/**
 * The permissions an installation of the App holds: `default_permissions` of app.yml. A route that
 * needs one the manifest lacks answers 403, as GitHub does, so a forgotten permission fails a test.
 */
export function grantedPermissions(): Record<string, "read" | "write"> {
  const permissions = manifest().default_permissions;
  if (typeof permissions !== "object" || permissions === null) throw new Error("app.yml has no default_permissions");
  return permissions as Record<string, "read" | "write">;
}
