import { readFileSync } from "node:fs";
import { parse } from "yaml";

/**
 * The events Lisa's App subscribes to: `default_events` of app.yml, the manifest it is registered
 * with. The emulator sends no other, so a handler for an event the App never gets fails its test.
 */
export function subscribedEvents(): string[] {
  const manifest = parse(readFileSync(new URL("../app.yml", import.meta.url), "utf8")) as { default_events?: unknown };
  const events = manifest.default_events;
  if (!Array.isArray(events) || !events.every((event) => typeof event === "string")) {
    throw new Error("app.yml has no list of default_events");
  }
  return events;
}
