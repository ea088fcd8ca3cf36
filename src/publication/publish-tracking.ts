// Over 250 lines: the tracking comment's view, its publication and its paced publisher write one comment.
import { readConfigOf } from "../config/run-config.ts";
import type { CoreDeps } from "../deps.ts";
import type { GitHubReader } from "../github/github-port.ts";
import { renderTrackingComment, type TrackingView, trackingMarker } from "../reporting/tracking-comment.ts";
import { isDiskFull } from "../store/disk-full.ts";
import type { EventRow, RunRow, SessionRow, StepRow, Store } from "../store/store.ts";
import { PASS_OUTCOME } from "../store/transitions.ts";
import { ensureComment } from "./ensure-comment.ts";
import { reflectionViews } from "./reflection-views.ts";

/** Events the tracking comment states in words: a run taken over by another worker, work dropped or done again. */
const NOTICED_EVENTS: ReadonlySet<string> = new Set(["taken_over", "work_dropped", "work_redone"]);

/** What the tracking comment shows of a run, from the store alone (each PR's gate as last read from GitHub). */
export async function trackingView(store: Store, runId: number, now: number, secrets: readonly string[]): Promise<TrackingView> {
  const run = await store.runs.get(runId);
  if (!run) throw new Error(`run ${runId} does not exist`);
  const passes = await store.passes.of(runId);
  const config = await readConfigOf(store, runId);
  const steps = await store.steps.of(runId);
  const planning = steps.find((s) => s.position === 0);
  const events = await store.events.of(runId);
  const current = passes.find((p) => p.number === run.current_pass);
  return {
    runId,
    state: run.state,
    pass: run.current_pass,
    maxPasses: config.limits.max_passes,
    requestedBy: run.requested_by,
    elapsedMs: (run.finished_at ?? now) - run.created_at,
    costUsd: await store.runs.cost(runId),
    judgeUsd: await store.runs.cost(runId, undefined, "judge"),
    limitUsd: config.limits.max_cost_usd,
    plan: planning
      ? {
          state:
            planning.state === "running"
              ? "running"
              : planning.state === "failed"
                ? "failed"
                : planning.state === "pending"
                  ? "pending"
                  : "delivered",
          ...(planning.summary ? { summary: planning.summary } : {}),
        }
      : undefined,
    steps: await Promise.all(
      steps
        .filter((s) => s.position > 0)
        .map(async (step) => {
          const gate = step.gate ?? undefined;
          const lastPass = (await store.steps.history(step.id)).at(-1);
          const failedGate = (step.gates ?? []).find((line) => !line.passed && line.output !== undefined);
          return {
            position: step.position,
            repo: `${step.owner}/${step.repo}`,
            branch: step.branch,
            state: step.state,
            phase: step.phase,
            ...(step.pr_url ? { prUrl: step.pr_url } : {}),
            ...(step.scope ? { scope: step.scope } : {}),
            ...(gate ? { gate } : {}),
            ...(failedGate?.output !== undefined
              ? {
                  lastGateFailure: {
                    command: failedGate.command,
                    output: failedGate.output,
                    ...(failedGate.judge ? { judge: failedGate.judge } : {}),
                  },
                }
              : {}),
            reflections: reflectionViews(await store.learnings.reflections(step.id, run.current_pass)),
            ...(lastPass?.block_reason && (step.state === "blocked" || step.state === "skipped")
              ? { blockReason: lastPass.block_reason }
              : {}),
            ...(step.state === "blocked" && lastPass?.wip_sha ? { wip: wipOf(step) } : {}),
            sessions: (await store.sessions.of(step.id))
              .filter((s) => s.pass === run.current_pass)
              .map((s) => ({
                iteration: s.iteration,
                provider: s.provider,
                ...(s.model ? { model: s.model } : {}),
                purpose: s.purpose,
                state: s.state,
                ...(s.finished_at !== null ? { durationMs: s.finished_at - s.started_at } : {}),
                costUsd: s.cost_usd,
                ...(s.turns !== null ? { turns: s.turns } : {}),
                ...(s.failure_kind ? { failureKind: s.failure_kind } : {}),
                ...(s.state === "stopped" ? stopOf(events, s, step) : {}),
              })),
          };
        }),
    ),
    queuedGuidance: (await store.guidance.queued(runId)).map((g) => ({
      author: g.author,
      source: g.source,
      excerpt: g.body.slice(0, 200),
    })),
    history: await Promise.all(
      passes.map(async (p) => ({
        pass: p.number,
        trigger: p.trigger,
        by: p.requested_by,
        outcome: PASS_OUTCOME[p.state],
        costUsd: await store.runs.cost(runId, p.number),
      })),
    ),
    canContinue: (current?.refinements ?? []).length > 0,
    ...(run.error ? { error: run.error } : {}),
    notices: [
      ...events
        .filter((event) => NOTICED_EVENTS.has(event.kind) && event.pass === run.current_pass && event.detail)
        .map((event) => event.detail ?? ""),
    ],
    ...withdrawal(events, run),
    ...handedBack(events, run),
    ...mergeRefused(events, run),
    humanPushes: humanPushes(events, run),
    secrets,
  };
}

/** Between passes, the pushes people made to the run's PRs in this pass (docs/operations.md): the next pass builds on them. */
function humanPushes(events: EventRow[], run: RunRow): NonNullable<TrackingView["humanPushes"]> {
  if (run.state === "running" || run.state === "queued") return [];
  return events
    .filter((event) => event.kind === "human_push" && event.pass === run.current_pass && event.actor && event.detail)
    .map((event) => {
      const [pr = "", range = ""] = (event.detail ?? "").split(" ");
      return { actor: event.actor ?? "", pr, range };
    });
}

/** While a run handed back (a shutdown, the database's loss) waits to resume where it stood, why: no agent works meanwhile. */
function handedBack(events: EventRow[], run: RunRow): Pick<TrackingView, "waitingFor"> {
  const last = events.findLast((event) => event.to_state !== null);
  if (run.state !== "queued" || last?.kind !== "interrupt" || !last.detail) return {};
  return { waitingFor: last.detail };
}

/** An accepted run whose merge GitHub refused (`on_accept: merge`) waits for a person to merge: it says which, and why. */
function mergeRefused(events: EventRow[], run: RunRow): Pick<TrackingView, "waitingFor"> {
  const accepted = events.findLastIndex((event) => event.to_state === "accepted");
  const refusal = events.findLast((event, index) => index > accepted && event.kind === "merge_refused");
  if (run.state !== "accepted" || !refusal?.detail) return {};
  const [head = "", status = "", ...words] = refusal.detail.split(" ");
  const pr = head.split("@")[0] ?? head;
  return {
    waitingFor: `a person to merge ${pr}: GitHub refused Lisa's merge (${status}: ${words.join(" ")}), and Lisa will not try it again`,
  };
}

/** While a run whose acceptance was withdrawn waits for review again, what withdrew it (docs/operations.md). */
function withdrawal(events: EventRow[], run: RunRow): Pick<TrackingView, "withdrawn"> {
  const last = events.findLast((event) => event.to_state !== null);
  if (run.state !== "review" || last?.kind !== "withdraw") return {};
  return { withdrawn: { ...(last.actor ? { actor: last.actor } : {}), ...(last.detail ? { what: last.detail } : {}) } };
}

/**
 * Who stopped a session, from the run's log: the first `/lisa abort` of its pass, or the closing of
 * its step's pull request, at or after the session started. Sessions are marked stopped just
 * before a person's gesture kills them (handle-gesture.ts), so one of the two is there.
 */
function stopOf(events: EventRow[], session: SessionRow, step: StepRow): { stoppedBy?: { actor: string; how: string } } {
  const pr = `${step.owner}/${step.repo}#${step.pr_number}`;
  const stop = events.find(
    (event) =>
      event.pass === session.pass &&
      event.created_at >= session.started_at &&
      event.actor !== null &&
      (event.kind === "abort" || (event.kind === "pr_closed" && event.detail === pr)),
  );
  if (!stop?.actor) return {};
  const how =
    stop.kind === "pr_closed"
      ? "closed the pull request"
      : !stop.detail
        ? "`/lisa abort`"
        : stop.detail.startsWith("/lisa")
          ? `\`${stop.detail}\``
          : stop.detail;
  return { stoppedBy: { actor: stop.actor, how } };
}

/**
 * Creates or edits the run's tracking comment; a failure to publish is logged, never fatal to the run.
 * `failure`: the run failed with this message, which the store could not record (a full data disk).
 * `notice`: a line to show for now, kept nowhere (a write waiting on GitHub's content limit).
 */
export async function publishTracking(
  deps: CoreDeps,
  gh: GitHubReader,
  runId: number,
  secrets: readonly string[] = deps.heldSecrets,
  failure?: string,
  notice?: string,
): Promise<void> {
  const run = await deps.store.runs.get(runId);
  if (!run) return;
  try {
    const stored = await trackingView(deps.store, runId, deps.now(), secrets);
    const view = notice ? { ...stored, notices: [...(stored.notices ?? []), notice] } : stored;
    await writeTracking(deps, gh, run, renderTrackingComment(failure ? failedView(view, failure) : view));
    if (run.tracking_owed) await deps.store.runs.oweTracking(runId, false);
  } catch (error) {
    deps.log.warn({ err: error, runId }, "could not update the tracking comment; it is written again later");
    try {
      // Owed in the store, where every worker (and the next process, after a restart) finds it.
      await deps.store.runs.oweTracking(runId, true);
    } catch (marking) {
      // A full data disk: the debt is lost with this process, and the run's next edit pays it.
      if (!isDiskFull(marking)) throw marking;
      deps.log.error({ err: marking, runId }, "the data disk is full: could not record the tracking edit as owed");
    }
  }
}

/** The run as the store would show it once it has recorded `failure`: failed, with the step that was running. */
function failedView(view: TrackingView, failure: string): TrackingView {
  const steps = view.steps.map((step) => (step.state === "running" ? { ...step, state: "failed" } : step));
  return { ...view, state: "failed", error: failure, steps };
}

async function writeTracking(deps: CoreDeps, gh: GitHubReader, run: RunRow, body: string): Promise<void> {
  const ref = { owner: run.owner, repo: run.repo };
  // Edited before it is recorded: a store that cannot write (a full disk) must not keep the edit from GitHub.
  // The first tracking comment tells the issue Lisa heard it, as the 👀 does: it goes out first.
  const id = await ensureComment(gh, ref, run.issue_number, trackingMarker(run.id), body, run.comment_id, "ack");
  if (id !== run.comment_id) await deps.store.runs.recordTrackingComment(run.id, id);
}

/** The least time between two edits of a tracking comment while a run executes; the last state is always written. */
export const TRACKING_INTERVAL_MS = 10_000;

export interface TrackingPublisher {
  /** Asks for the comment to show the run as it stands; returns at once, the edit follows (or joins a later one). */
  publish(): void;
  /** Writes the latest state if it is not written yet, and waits for edits under way. */
  flush(): Promise<void>;
}

/**
 * Tracking-comment edits off the run's critical path, coalesced. Every phase of a run asks for an
 * edit; each edit is a GitHub write that waits its turn in the write pacing (about one a second), so
 * awaiting them made a run as slow as its comment and a near-instant run spent most of its writes
 * here. The first request writes at once (the comment appears when the run starts); later ones
 * within `intervalMs` of the last write become one edit, made when the interval has passed.
 */
export function trackingPublisher(
  publishNow: () => Promise<void>,
  intervalMs: number = TRACKING_INTERVAL_MS,
  now: () => number = Date.now,
): TrackingPublisher {
  let writing: Promise<void> | undefined;
  let lastWrite = Number.NEGATIVE_INFINITY;
  let dirty = false;
  let timer: NodeJS.Timeout | undefined;

  const write = (): Promise<void> => {
    dirty = false;
    lastWrite = now();
    writing = publishNow().finally(() => {
      writing = undefined;
      if (dirty) schedule();
    });
    return writing;
  };

  function schedule(): void {
    if (writing || timer) return;
    const wait = lastWrite + intervalMs - now();
    if (wait <= 0) {
      // A store that cannot be reached fails this edit; flush() meets the failure, or a later edit succeeds.
      write().catch(() => {});
      return;
    }
    timer = setTimeout(() => {
      timer = undefined;
      if (dirty) schedule();
    }, wait);
    // A pending edit never keeps the process alive; flush() writes it at the end of the run.
    timer.unref();
  }

  return {
    publish() {
      dirty = true;
      schedule();
    },
    async flush() {
      while (writing) await writing;
      clearTimeout(timer);
      timer = undefined;
      if (dirty) await write();
    },
  };
}

/** A blocked step's WIP branch (push-step.ts's `wipBranch`), linked beside its pull request when it has one. */
function wipOf(step: StepRow): { ref: string; url?: string } {
  const ref = `${step.branch}--wip`;
  const repoUrl = step.pr_url?.replace(/\/pull\/\d+$/, "");
  return repoUrl && repoUrl !== step.pr_url ? { ref, url: `${repoUrl}/tree/${encodeURI(ref)}` } : { ref };
}
