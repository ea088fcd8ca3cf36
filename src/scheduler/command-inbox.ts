import { FAILED_OUTCOME, repeatedCommand } from "../commands/coalesce.ts";
import type { Gesture, LabeledCommand } from "../commands/gesture.ts";
import type { RunControls } from "../commands/gesture-scene.ts";
import { handleGesture } from "../commands/handle-gesture.ts";
import { startRun } from "../commands/start-run.ts";
import type { CoreDeps } from "../deps.ts";
import { GitHubError } from "../github/github-error.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { replyOnce } from "../publication/ensure-comment.ts";
import { isDiskFull } from "../store/disk-full.ts";
import type { CommandRow } from "../store/rows.ts";
import { issueOfCommand } from "./command-issue.ts";
import { drainInbox } from "./drain-inbox.ts";

/** Tries of a command GitHub keeps failing (5xx, 429, secondary rate limits) before Lisa says so on the issue. */
const MAX_COMMAND_ATTEMPTS = 5;
/** The first pause before trying again; it doubles each time (2, 4, 8, 16 s). */
export const COMMAND_RETRY_MS = 2_000;

/**
 * Commands handled at once, each on an issue of its own: most of their time is GitHub's answers, and
 * GitHub allows 100 concurrent requests.
 */
export const COMMANDS_AT_ONCE = 8;

/**
 * How many ready commands the drain looks at each time a slot frees: enough to find commands of
 * other issues behind a burst on one, few enough that a flood is not decoded again at every look.
 */
const READY_WINDOW = COMMANDS_AT_ONCE * 8;

/** How many earlier gestures a command is compared with, to find one it repeats. */
const RECENT_COMMANDS = 500;

export interface CommandInboxOptions {
  /** What commands steer runs through (the worker). */
  controls: RunControls;
  /** The first pause before a command GitHub failed is tried again (tests shorten it). */
  retryMs?: number;
  /** Runs before each command: what a full disk kept from the store is written first. */
  beforeEach: () => Promise<void>;
  /** A command's pause is over: it is ready to be handled again. */
  due: () => void;
}

/**
 * The stored commands, handled once each: a forged row is refused, a repeat coalesced, GitHub's bad
 * minutes waited out (up to MAX_COMMAND_ATTEMPTS), and any other failure told to whoever asked.
 */
export class CommandInbox {
  readonly #deps: CoreDeps;
  readonly #options: CommandInboxOptions;
  readonly #retryMs: number;
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  /** Tells a drain under way that a command may have been stored since it last looked. */
  #arrived: () => void = () => {};

  constructor(deps: CoreDeps, options: CommandInboxOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#retryMs = options.retryMs ?? COMMAND_RETRY_MS;
  }

  /** A command may have been stored: a drain under way looks again. */
  arrived(): void {
    this.#arrived();
  }

  /** Forgets the commands waiting to be tried again (they stay stored, for the next start). */
  stop(): void {
    for (const timer of this.#retryTimers) clearTimeout(timer);
    this.#retryTimers.clear();
  }

  /**
   * Handles the stored commands, oldest first, while `open()`: several at once, one at a time per
   * issue (drainInbox).
   */
  async drain(open: () => Promise<boolean>): Promise<void> {
    const { store } = this.#deps;
    await drainInbox(
      {
        ready: () => store.commands.ready(READY_WINDOW),
        issueOf: (command) => issueOfCommand(store, command),
        handle: (command) => this.#handleStored(command),
        open,
        arrival: () =>
          new Promise<void>((resolve) => {
            this.#arrived = resolve;
          }),
      },
      COMMANDS_AT_ONCE,
    );
  }

  /** A command the drain found in the table: one GitHub failed waits in it for its next try. */
  async #handleStored(command: CommandRow): Promise<void> {
    const failed = await this.#handle(command, command.attempts);
    if (failed) await this.#retryLater(command, failed);
  }

  /**
   * A command the job library handed out (try `attempt`, from 0): "retry" when GitHub failed and
   * tries are left, for the library to hand it out again later. One handled already is done.
   */
  async handleQueued(commandId: number, attempt: number): Promise<"done" | "retry"> {
    const command = await this.#deps.store.commands.get(commandId);
    if (command?.state !== "pending") return "done";
    const failed = await this.#handle(command, attempt);
    if (!failed) return "done";
    this.#deps.log.warn(
      { err: failed, delivery: command.delivery_id, attempt: attempt + 1 },
      "GitHub failed; the command will be tried again",
    );
    return "retry";
  }

  /** Handles one command; a failure of GitHub's to try again later, with tries left after `attempts`, is returned. */
  async #handle(command: CommandRow, attempts: number): Promise<GitHubError | undefined> {
    const { store, log } = this.#deps;
    // A run may have failed on a full disk since the pump began: its retry must find it failed.
    await this.#options.beforeEach();
    if (!store.commands.isGenuine(command)) {
      await this.#refuseForged(command);
      return undefined;
    }
    let outcome: string;
    try {
      const payload = command.request as (Gesture & LabeledCommand) | undefined;
      if (payload === undefined) throw new Error("the command's payload is not JSON");
      // Only a gesture can repeat one; a label is stored once per event already. A row Lisa did
      // not write must not make a genuine command count as a repeat either.
      const repeated =
        command.kind === "gesture"
          ? await repeatedCommand(
              command,
              (await store.commands.gesturesBefore(command.id, RECENT_COMMANDS)).filter((row) => store.commands.isGenuine(row)),
              (from, to) => store.runs.cameToRest(payload.owner, payload.repo, payload.number, from, to),
            )
          : undefined;
      outcome = repeated
        ? `coalesced into command ${repeated.id}`
        : command.kind === "start_run"
          ? await startRun(this.#deps, command.delivery_id, payload as LabeledCommand, this.#options.controls, command.created_at)
          : command.kind === "gesture"
            ? await handleGesture(this.#deps, command.delivery_id, payload as Gesture, this.#options.controls)
            : `ignored: unknown command kind ${command.kind}`;
    } catch (error) {
      if (error instanceof GitHubError && error.transient && attempts + 1 < MAX_COMMAND_ATTEMPTS) return error;
      outcome = `${FAILED_OUTCOME}${(error as Error).message}`;
      log.error({ err: error, delivery: command.delivery_id }, "could not handle command");
      await this.#tellFailure(command, error);
    }
    await store.commands.finish(command.id, outcome);
    log.info({ delivery: command.delivery_id, outcome }, "command handled");
    return undefined;
  }

  /**
   * A command row without a valid MAC was written by someone with access to the database, not by
   * Lisa (or before commands were signed): it is never run, and is marked done so it is not
   * looked at again.
   */
  async #refuseForged(command: CommandRow): Promise<void> {
    const { store, log, metrics } = this.#deps;
    const why = command.mac
      ? "its MAC is wrong"
      : "it has no MAC (inserted by someone else, or written by a Lisa older than signed commands: redo that command)";
    log.error({ commandId: command.id, delivery: command.delivery_id, kind: command.kind }, `command row refused: ${why}`);
    metrics.forgedCommand();
    await store.commands.finish(command.id, `refused: not written by Lisa (${command.mac ? "wrong MAC" : "no MAC"})`);
  }

  /** Tries a command again after a pause that doubles each time: GitHub's bad minutes usually pass. */
  async #retryLater(command: CommandRow, error: unknown): Promise<void> {
    const wait = Math.min(this.#retryMs * 2 ** command.attempts, 60_000);
    await this.#deps.store.commands.retryLater(command.id, this.#deps.now() + wait);
    this.#deps.log.warn(
      { err: error, delivery: command.delivery_id, attempt: command.attempts + 1, retryInMs: wait },
      "GitHub failed; the command will be tried again",
    );
    const timer = setTimeout(() => {
      this.#retryTimers.delete(timer);
      this.#options.due();
    }, wait);
    this.#retryTimers.add(timer);
  }

  /**
   * Says on the issue or pull request that a command could not be acted on, so the person who
   * asked is not left with a 👀 and nothing else. Reviews and pushes have no one waiting for an
   * answer: the gate is read again at the next event and at start-up.
   */
  async #tellFailure(command: CommandRow, error: unknown): Promise<void> {
    const deps = this.#deps;
    const payload = command.request as Gesture | LabeledCommand;
    // Octokit's message ends with a documentation link: the status and GitHub's words are enough here.
    const said = ((error as Error).message ?? "").split(" - https://")[0];
    const cause =
      error instanceof GitHubError && error.transient
        ? `GitHub kept failing (${error.status || "no answer:"} ${said}), ${MAX_COMMAND_ATTEMPTS} times`
        : isDiskFull(error)
          ? "Lisa's data disk is full (an operator must free space on it)"
          : `it hit an unexpected error: ${said}`;
    let where: { installationId: number; owner: string; repo: string; number: number } | undefined;
    let text = "";
    if (command.kind === "start_run" && "issue" in payload) {
      where = { ...payload, number: payload.issue.number };
      text = `Lisa could not start on this issue: ${cause}. Nothing was started; remove the \`${payload.label}\` label and add it again to try once more.`;
    } else if ("kind" in payload && payload.kind === "command") {
      where = payload;
      text = `@${payload.sender}, Lisa could not act on \`/lisa ${payload.command.word}\`: ${cause}. Nothing was changed; comment it again to try once more.`;
    }
    if (!where) return;
    try {
      const gh = await deps.github(where.installationId);
      await replyOnce(
        gh,
        { owner: where.owner, repo: where.repo },
        where.number,
        command.delivery_id,
        redactSecrets(text, deps.heldSecrets),
      );
    } catch (replyError) {
      deps.log.error({ err: replyError, delivery: command.delivery_id }, "could not say on GitHub that a command failed");
    }
  }
}
