import type { CoreDeps } from "../deps.ts";
import type { GitHubReader, RepoRef } from "../github/github-port.ts";
import type { RunRow, StepRow } from "../store/store.ts";
import type { Gesture } from "./gesture.ts";

/** What the worker lets a command do to runs it is executing. */
export interface RunControls {
  /** Stops the live agent sessions of a run (or of one of its steps) now, recorded as stopped by the person who asked. */
  stopSessions(runId: number, stepId?: number): Promise<void>;
  /**
   * Lets a write that only tells someone Lisa heard them (👀) wait for its turn in GitHub's write
   * pacing without holding up the commands and runs after it.
   */
  acknowledge(write: Promise<void>): void;
  /** Runs the gates of a run at rest again at its step's head, into a new check run ("Re-run" on Lisa's check). */
  rerunGates(runId: number, stepId: number, asked: { headSha: string; sender: string }): Promise<string>;
}

/** A gesture with what every handler of it reads: looked up once, so each family of gestures starts from the same facts. */
export interface Scene {
  deps: CoreDeps;
  gh: GitHubReader;
  deliveryId: string;
  /** The repository where the gesture happened. */
  ref: RepoRef;
  gesture: Gesture;
  run: RunRow | undefined;
  /** The step whose pull request it happened on. */
  step: StepRow | undefined;
  controls: RunControls;
  reply(text: string): Promise<void>;
}
