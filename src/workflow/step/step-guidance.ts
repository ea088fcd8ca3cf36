import type { GuidanceFeed } from "../../providers/session-input.ts";
import type { StepRow } from "../../store/store.ts";
import type { RunContext } from "../context/run-context.ts";
import { steeringMessage } from "./guidance-prompt.ts";

/** How often a running session looks for guidance bound to its pass: it may be written by another process (a web process). */
export const STEER_POLL_MS = 1_000;

/**
 * What of its pass's guidance a step's agent has been given. Guidance bound to the pass later (a
 * reviewer steering the running pass) is given to the running session, or resumes the work in a
 * new one (`Provider.steering`).
 */
export class StepGuidance {
  readonly #ctx: RunContext;
  readonly #step: StepRow;
  /** The highest guidance id the agent has had. */
  #given = 0;

  constructor(ctx: RunContext, step: StepRow) {
    this.#ctx = ctx;
    this.#step = step;
  }

  /** The prompt about to be built holds all of the pass's guidance so far (anything later is given again, never lost). */
  async allInPrompt(): Promise<void> {
    for (const item of await this.#ctx.deps.store.guidance.forPass(this.#ctx.pass.id))
      this.#given = Math.max(this.#given, item.id);
  }

  /** The pass's guidance the agent has not had, numbered as in the prompt and the package. */
  async fresh() {
    const all = await this.#ctx.deps.store.guidance.forPass(this.#ctx.pass.id);
    return all.map((item, index) => ({ item, index })).filter(({ item }) => item.id > this.#given);
  }

  /** The running session's view of it: each new item as a message of its own, given once. */
  feed(): GuidanceFeed {
    return {
      everyMs: STEER_POLL_MS,
      waiting: async () =>
        (await this.fresh()).map(({ item, index }) => ({
          text: steeringMessage(this.#ctx, this.#step, item, index),
          given: () => {
            this.#given = Math.max(this.#given, item.id);
          },
        })),
    };
  }
}
