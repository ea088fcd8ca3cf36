import path from "node:path";
import type { Provider } from "../../providers/provider.ts";
import { openLiveCheck, trackingUrl, updateCheck } from "../../publication/check-runs.ts";
import { issueRefFor } from "../../publication/issue-ref.ts";
import {
  type LiveOutcome,
  type LiveView,
  liveEndReport,
  liveReport,
  MAX_COMMANDS,
  MAX_FILES,
} from "../../reporting/live-check-summary.ts";
import type { GateLine } from "../../reporting/views.ts";
import type { StepRow } from "../../store/store.ts";
import { BlockedError, type RunContext, StepStoppedError, StoppedError } from "../context/run-context.ts";

/**
 * How often a live check run is written at most, as deployed: a reviewer sees the session within
 * half a minute, and each running session takes two of the installation's 60 paced writes a minute
 * (src/github/write-pacer.ts), leaving the rest to comments, pushes and reviews.
 */
export const LIVE_CHECK_INTERVAL_MS = 30_000;

/** The agent's latest words are kept to this many characters before they are cleaned for the check. */
const SAID_KEPT = 4_000;

/** A running pass's "Lisa" check run, fed by the agent's streamed output. */
export interface LiveCheck {
  /** A new agent session of the step (numbered as the tracking comment numbers it): its stdout lines, for the check run. */
  session(provider: Provider, purpose: string, cwd: string, iteration: number): ((line: string) => void) | undefined;
  /** The gates ran, with these results. */
  gates(lines: GateLine[]): void;
  /** The session is over: one last write, with a conclusion, once any write under way is done. */
  end(outcome: LiveOutcome): Promise<void>;
}

/** A path the agent named, as the reviewer knows it: relative to the worktree, else only its file name. */
function shownPath(file: string, cwd: string): string {
  if (!path.isAbsolute(file)) return path.normalize(file);
  const relative = path.relative(cwd, file);
  return relative && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : `…/${path.basename(file)}`;
}

/**
 * Opens the live check run of a pass on a pull request that exists: a new "Lisa" check run, in
 * progress, on the head the session starts from (the merge box shows the newest), or the one still
 * in progress there. The first pass
 * of a new pull request has no head to put it on (a check run on the base commit would show on the
 * default branch for everyone), so it has none: its progress is the tracking comment's step line.
 */
export async function startLiveCheck(ctx: RunContext, step: StepRow): Promise<LiveCheck | undefined> {
  if (step.pr_number === null || step.pr_state !== "open" || !step.head_sha) return undefined;
  const { deps, gh } = ctx;
  const ref = { owner: step.owner, repo: step.repo };
  const intervalMs = deps.liveCheckIntervalMs ?? LIVE_CHECK_INTERVAL_MS;
  const run = (await deps.store.runs.get(ctx.run.id)) ?? ctx.run;
  const view: LiveView = {
    issueRef: issueRefFor(run, step),
    pass: ctx.pass.number,
    headSha: step.head_sha,
    session: 0,
    purpose: undefined,
    provider: undefined,
    turns: 0,
    costUsd: 0,
    files: [],
    commands: [],
    commandsRun: 0,
    said: undefined,
    gates: undefined,
    intervalMs,
    trackingUrl: trackingUrl(run, step),
    secrets: ctx.secrets,
  };
  const failed = (error: unknown) => {
    // A check is a courtesy: a refusal (no `checks: write`) ends the live view, never the pass.
    id = undefined;
    deps.log.warn({ err: error, runId: run.id, stepId: step.id }, "could not write the live check run");
  };
  let id: number | undefined;
  try {
    id = await openLiveCheck(gh, ref, view.headSha, liveReport(view));
  } catch (error) {
    failed(error);
  }
  if (id === undefined) return undefined;

  let lastWrite = deps.now();
  let writing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  let dirty = false;
  let ended = false;
  // At most one write per interval, counted from the end of the last (one GitHub answered late is
  // not followed at once by the next): changes meanwhile are gathered into the next write.
  const schedule = () => {
    if (timer || busy || !dirty || ended || id === undefined) return;
    timer = setTimeout(write, Math.max(0, lastWrite + intervalMs - deps.now()));
    timer.unref();
  };
  const write = () => {
    timer = undefined;
    dirty = false;
    busy = true;
    writing = (async () => {
      if (id !== undefined && !ended) await updateCheck(gh, ref, id, liveReport(view)).catch(failed);
      lastWrite = deps.now();
      busy = false;
      schedule();
    })();
  };
  const changed = () => {
    dirty = true;
    schedule();
  };
  const turns = new Set<string>();

  return {
    session(provider, purpose, cwd, iteration) {
      view.session = iteration;
      view.purpose = purpose;
      view.provider = provider.name;
      view.turns = 0;
      view.costUsd = 0;
      // The last session's words are not this one's: under the new header they would read as its.
      view.said = undefined;
      turns.clear();
      changed();
      const progress = provider.progress?.({ prices: deps.tokenPrices });
      if (!progress) return undefined;
      return (line) => {
        const event = progress(line);
        if (!event) return;
        if (event.turn && !turns.has(event.turn)) {
          turns.add(event.turn);
          view.turns = turns.size;
        }
        view.costUsd = event.sessionCostUsd ?? view.costUsd + (event.costUsd ?? 0);
        for (const file of event.files ?? []) {
          const shown = shownPath(file, cwd);
          view.files = [...view.files.filter((f) => f !== shown), shown].slice(-MAX_FILES * 5);
        }
        for (const command of event.commands ?? []) {
          view.commandsRun += 1;
          view.commands = [...view.commands, command.slice(0, 1_000)].slice(-MAX_COMMANDS);
        }
        if (event.text?.trim()) view.said = event.text.slice(-SAID_KEPT);
        changed();
      };
    },
    gates(lines) {
      view.gates = lines.map(({ command, passed }) => ({ command, passed }));
      changed();
    },
    async end(outcome) {
      if (timer) clearTimeout(timer);
      ended = true;
      await writing;
      if (id === undefined) return;
      await updateCheck(gh, ref, id, liveEndReport(view, outcome)).catch(failed);
    },
  };
}

/** Runs `build` with the step's live check run, and ends the check run as the build ended. */
export async function withLiveCheck<T>(
  ctx: RunContext,
  step: StepRow,
  build: (live: LiveCheck | undefined) => Promise<T>,
): Promise<T> {
  const live = await startLiveCheck(ctx, step);
  try {
    const result = await build(live);
    await live?.end({ kind: "built" });
    return result;
  } catch (error) {
    await live?.end(
      error instanceof StoppedError || error instanceof StepStoppedError
        ? { kind: "stopped" }
        : error instanceof BlockedError
          ? { kind: "blocked", reason: error.message }
          : { kind: "failed", reason: "The pass failed; the tracking comment says why." },
    );
    throw error;
  }
}
