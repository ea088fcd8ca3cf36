import type { Probot } from "probot";
import { type CiSignals, ciKey } from "../ci/ci-signals.ts";
import { type LabelVerdict, labelTriage } from "../config/config-cache.ts";
import { onCheckRerequested } from "../handlers/on-check-rerequested.ts";
import { onIssueClosedOrUnlabeled } from "../handlers/on-issue-closed-or-unlabeled.ts";
import { onIssueComment } from "../handlers/on-issue-comment.ts";
import { onIssueLabeled } from "../handlers/on-issue-labeled.ts";
import { onPullRequest } from "../handlers/on-pull-request.ts";
import { onPullRequestReview } from "../handlers/on-pull-request-review.ts";
import { onPullRequestReviewComment } from "../handlers/on-pull-request-review-comment.ts";
import type { LisaMetrics } from "../metrics/lisa-metrics.ts";
import { STATE_LABELS } from "../publication/state-labels.ts";
import { saidOnKey } from "../scheduler/command-issue.ts";
import { SURE_COMMAND, UNSURE_COMMAND } from "../store/commands.ts";
import { isDiskFull } from "../store/disk-full.ts";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";
import type { Store } from "../store/store.ts";
import { assertPayloadShape } from "./payload-shape.ts";

export interface WebhookIntake {
  store: Store;
  metrics: LisaMetrics;
  now: () => number;
  /** A command row was stored: it is queued for a worker (Worker.commandStored). */
  stored(command: { id: number; kind: string; payload: unknown; priority: number }): void;
  /** Runs in this process waiting for a head's CI, woken when a check on it reports. */
  ciSignals?: CiSignals;
  /** The App's id (APP_ID): a rerequest of another App's check is not Lisa's. */
  appId?: number | undefined;
}

/**
 * Listens for the deliveries Lisa acts on: each is triaged from its payload alone, and what can
 * concern Lisa is stored once per delivery and once per event, then queued. Nothing here calls
 * GitHub or runs anything, so a webhook is answered in milliseconds.
 */
export function listenForWebhooks(probot: Probot, intake: WebhookIntake): void {
  const { store, metrics, now } = intake;
  // Every handler sees only payloads of the shape its event always has; any other is answered 400.
  const app = {
    on: ((events: never, handler: (context: { name: string; payload: unknown }) => Promise<void>) =>
      probot.on(events, async (context: { name: string; payload: unknown }) => {
        assertPayloadShape(context.name, context.payload);
        await handler(context);
      })) as Probot["on"],
  };
  const accept = async (
    context: { id: string; name: string; log: { debug(o: object, m: string): void; info(o: object, m: string): void } },
    kind: "start_run" | "gesture",
    triage: { command: unknown; key: string } | { ignored: string },
    priority = SURE_COMMAND,
  ) => {
    if ("ignored" in triage) {
      context.log.debug({ reason: triage.ignored }, `${context.name} ignored`);
      return;
    }
    const started = performance.now();
    const place = { priority, issue: saidOnKey(kind, triage.command) };
    const id = await storing(() => store.commands.add(context.id, kind, triage.command, triage.key, place));
    metrics.webhookStored(performance.now() - started);
    if (id === undefined) context.log.info({ delivery: context.id }, "webhook delivered again; already stored");
    // pg-boss hands it to a worker (none in a web process); on SQLite this process's worker is woken,
    // after the answer is written: woken here, its first steps would run ahead of the answer's.
    else setImmediate(() => intake.stored({ id, kind, payload: triage.command, priority }));
  };
  const triageLabel = labelTriage(store);
  // What a stale read says is not Lisa's label is stored behind what is surely hers; what a fresh one says so is dropped.
  const verdictOn = (command: { installationId: number; owner: string; repo: string }, label: string) =>
    storing(() => triageLabel({ ...command, label }, now()));
  const dropped = (context: { log: { debug(o: object, m: string): void } }, label: string | null, verdict: LabelVerdict) => {
    if (verdict.kind !== "foreign") return false;
    metrics.webhookDropped("foreign_label");
    context.log.debug({ label, lisaLabel: verdict.lisaLabel }, "dropped: not the repository's Lisa label");
    return true;
  };
  const priorityOf = (verdict: LabelVerdict | undefined) => (verdict?.kind === "unsure" ? UNSURE_COMMAND : SURE_COMMAND);
  app.on("issues.labeled", async (context) => {
    const triage = onIssueLabeled(context.payload);
    // Only what the worker would answer "another label" is dropped, and only on a fresh read of the config.
    const label = "command" in triage ? triage.command.label : null;
    const verdict = "command" in triage && label !== null ? await verdictOn(triage.command, label) : undefined;
    if (verdict && dropped(context, label, verdict)) return;
    await accept(context, "start_run", triage, priorityOf(verdict));
  });
  // The Lisa label taken off, or the issue closed, stops the run; another label is dropped as above.
  app.on(["issues.unlabeled", "issues.closed"], async (context) => {
    const triage = onIssueClosedOrUnlabeled(context.payload as never);
    const label = "command" in triage ? triage.command.label : null;
    const verdict = "command" in triage && label !== null ? await verdictOn(triage.command, label) : undefined;
    if (verdict && dropped(context, label, verdict)) return;
    if ("command" in triage && label === null) {
      // Issues close all day: one that carries neither Lisa's label nor a state label of hers has
      // no run under way to stop (a run's issue carries both until it is over, or its issue's gesture stopped it).
      const labels = (context.payload.issue.labels ?? []).map((l) => (typeof l === "string" ? l : l.name));
      const ours = async (name: string) =>
        STATE_LABEL_NAMES.has(name) || (await verdictOn(triage.command, name)).kind !== "foreign";
      if (!(await Promise.all(labels.map(ours))).some(Boolean)) {
        metrics.webhookDropped("no_lisa_label");
        context.log.debug("issues.closed dropped: the issue carries none of Lisa's labels");
        return;
      }
    }
    await accept(context, "gesture", triage, priorityOf(verdict));
  });
  app.on("issue_comment.created", (context) => accept(context, "gesture", onIssueComment(context.payload)));
  app.on(["pull_request_review.submitted", "pull_request_review.dismissed"], (context) =>
    accept(context, "gesture", onPullRequestReview(context.payload as never)),
  );
  app.on("pull_request_review_comment.created", (context) =>
    accept(context, "gesture", onPullRequestReviewComment(context.payload as never)),
  );
  app.on(["pull_request.closed", "pull_request.reopened", "pull_request.synchronize"], (context) =>
    accept(context, "gesture", onPullRequest(context.payload as never)),
  );
  // The pull request's CI reported on a head: nothing is stored (a waiting run reads the checks
  // itself, and polls in case this is lost or reaches another process), a waiter here wakes.
  const ciReported = (repository: { name: string; owner: { login: string } }, sha: string) =>
    intake.ciSignals?.signal(ciKey(repository.owner.login, repository.name, sha));
  app.on(["check_run", "check_suite"], async (context) => {
    const payload = context.payload as { repository: { name: string; owner: { login: string } } } & (
      | { check_run: { head_sha: string } }
      | { check_suite: { head_sha: string } }
    );
    ciReported(payload.repository, "check_run" in payload ? payload.check_run.head_sha : payload.check_suite.head_sha);
    // "Re-run" pressed on Lisa's own check: her gates run again at that head.
    if ((context.payload as { action?: string }).action === "rerequested")
      await accept(
        context,
        "gesture",
        onCheckRerequested(context.payload as never, { appId: intake.appId, deliveryId: context.id }),
      );
  });
  app.on("status", async (context) => ciReported(context.payload.repository, context.payload.sha));
}

const STATE_LABEL_NAMES: ReadonlySet<string> = new Set(Object.values(STATE_LABELS));

/** Reads or writes the store for a webhook; a database or disk that cannot serve it answers 503. */
async function storing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    // 503, not 500: nothing was stored, and GitHub's redelivery (or the operator's) brings it again.
    if (isDatabaseUnavailable(error))
      throw Object.assign(new Error("the database is unavailable; deliver again"), { status: 503 });
    if (isDiskFull(error))
      throw Object.assign(new Error("Lisa's data disk is full; deliver again once it has space"), { status: 503 });
    throw error;
  }
}
