import { providers } from "../providers/registry.ts";
import { publishTracking } from "../publication/publish-tracking.ts";
import type { NewGuidance, PassRow } from "../store/store.ts";
import type { Scene } from "./gesture-scene.ts";

/**
 * Guidance written while an agent session of the pass runs joins that pass: the session takes it up
 * the way its provider steers (`Provider.steering`). Returns undefined when no session runs.
 *
 * Guidance that comes while the gates run (or between steps, or during planning, handled before)
 * keeps waiting for the next pass: the gates judge work already done, and turning back to the agent
 * would run them all again and hold back the package the reviewer waits for, while the queued pass
 * starts as soon as this one ends.
 */
export async function steerRunningPass(
  scene: Scene,
  pass: Pick<PassRow, "id" | "number">,
  items: NewGuidance[],
): Promise<string | undefined> {
  const { deps, gh, run } = scene;
  if (!run) return undefined;
  const running = await deps.store.guidance.steer(run.id, pass, items);
  if (running.length === 0) return undefined;
  const ways = running.map((name) => {
    const via = providers[name as keyof typeof providers]?.steering.via;
    return via === "stream"
      ? `the running ${name} session reads it now`
      : `the running ${name} session stops at its next safe point and a new session of the pass resumes the work with it`;
  });
  await scene.reply(`Taken into pass ${pass.number} while it runs: ${ways.join("; ")}.`);
  await publishTracking(deps, gh, run.id);
  return "guidance steered the running pass";
}
