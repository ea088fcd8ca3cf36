import { beforeAll } from "vitest";
import type { Delivery, GitHubEmulator, ReviewState } from "../../emulator/github-emulator.ts";
import type { Gesture, LabeledCommand } from "../../src/commands/gesture.ts";
import type { RunControls } from "../../src/commands/gesture-scene.ts";
import { handleGesture } from "../../src/commands/handle-gesture.ts";
import { startRun } from "../../src/commands/start-run.ts";
import type { CoreDeps } from "../../src/deps.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import { onCheckRerequested } from "../../src/handlers/on-check-rerequested.ts";
import { onIssueClosedOrUnlabeled } from "../../src/handlers/on-issue-closed-or-unlabeled.ts";
import { onIssueComment } from "../../src/handlers/on-issue-comment.ts";
import { onIssueLabeled } from "../../src/handlers/on-issue-labeled.ts";
import { onPullRequest } from "../../src/handlers/on-pull-request.ts";
import { onPullRequestReview } from "../../src/handlers/on-pull-request-review.ts";
import { onPullRequestReviewComment } from "../../src/handlers/on-pull-request-review-comment.ts";
import type { Triage } from "../../src/handlers/payload-filters.ts";
import { publishRunState } from "../../src/publication/publish-state.ts";
import * as changes from "../../src/store/run-changes.ts";
import type { Store } from "../../src/store/store.ts";
import type { RunState } from "../../src/store/transitions.ts";
import { gitIn } from "./git-fixtures.ts";
import { inProcessGitHub, useMemoryStore } from "./in-process-github.ts";

// The `/lisa` commands' middle layer without a process, a socket or a worker: gestures made from the
// payloads the emulator sends when a person acts on GitHub (through Lisa's own webhook handlers),
// handled by handleGesture or startRun against a store in memory and the emulator in this process.

/** The repository of most runs: no config file, so the defaults. */
export const REPO = "acme/api";
/** A second repository of a run, where the writer has no write access. */
export const OTHER = "acme/web";
/** `limits.max_passes: 1`. */
export const ONE_PASS = "acme/once";
/** A config that lists two repositories (itself and OTHER): its runs start with a plan. */
export const MULTI = "acme/both";
/** Pull requests of their own, for what looks at every open pull request of a repository (a check's rerequest). */
export const CHECKS = "acme/checks";
/** A `.github/lisa.yml` that does not validate. */
export const BROKEN = "acme/broken";

/** Can write on every repository but OTHER. */
export const WRITER = "wanda";
/** Can read REPO only. */
export const READER = "rita";
/** Opens the issues. */
export const AUTHOR = "ann";

/** What the worker's controls were asked to do. */
export interface ControlsLog {
  controls: RunControls;
  stopped: { runId: number; stepId?: number }[];
  reruns: { runId: number; stepId: number; headSha: string; sender: string }[];
  /** Waits for the acknowledgements (👀) the handler let run on. */
  settled(): Promise<unknown>;
}

export function fakeControls(): ControlsLog {
  const acknowledged: Promise<void>[] = [];
  const log: ControlsLog = {
    stopped: [],
    reruns: [],
    settled: () => Promise.all(acknowledged),
    controls: {
      async stopSessions(runId, stepId) {
        log.stopped.push(stepId === undefined ? { runId } : { runId, stepId });
      },
      acknowledge(write) {
        acknowledged.push(write);
      },
      async rerunGates(runId, stepId, asked) {
        log.reruns.push({ runId, stepId, ...asked });
        return "gates run again";
      },
    },
  };
  return log;
}

/** A gesture as the worker receives it: the webhook's delivery id and what Lisa's handler made of its payload. */
export interface Received<T = Gesture> {
  deliveryId: string;
  gesture: T;
}

/** What the store and GitHub hold of a run set up by `runAt`. */
export interface RunSetup {
  runId: number;
  passId: number;
  issue: number;
  /** The run's step (its first build step; the planning step of a plan waiting for review). */
  stepId: number;
  /** The second step's, with `twoSteps`. */
  otherStepId?: number;
  /** The step's pull request, with `pullRequest`. */
  pull?: number;
}

export interface RunOptions {
  repo?: string;
  /** The config the run was started with (stored on the run). */
  config?: unknown;
  /** The step has a pull request on GitHub, at Lisa's commit. */
  pullRequest?: boolean;
  /** A second step, on OTHER, in the same state as the first; its pull request is known to the store only (nothing may read the gate). */
  twoSteps?: boolean;
  /** What the agent proposed at the gate (`review` and later). */
  refinements?: string[];
}

export interface CommandWorld {
  github: GitHubEmulator;
  port: GitHubPort;
  store: Store;
  deps: CoreDeps;
  log: ControlsLog;
  /** Lisa's commit on every `lisa/…` branch the tests open a pull request from in REPO. */
  headSha: string;
  /** The same in `repo` (REPO or CHECKS). */
  headOf(repo: string): string;
  /** An issue AUTHOR opens on `repo`. */
  issue(repo?: string): Promise<number>;
  /** A run of a new issue in `state`, as the workflow would have left it, and shown so on GitHub. */
  runAt(state: RunState, options?: RunOptions): Promise<RunSetup>;
  /** `user` comments `body` on issue or pull request `number`. */
  comment(number: number, body: string, user?: string, repo?: string): Promise<Received>;
  /** `user` reviews pull request `number` of REPO. */
  review(
    number: number,
    review: {
      state: ReviewState;
      user?: string;
      body?: string;
      commitId?: string;
      comments?: { path: string; line: number; body: string }[];
    },
  ): Promise<Received>;
  /** `user` writes an inline comment on pull request `number` of REPO (a command, else null). */
  inline(number: number, inline: { body: string; user?: string; inReplyTo?: number; line?: number }): Promise<Received | null>;
  /** `user` adds `label` to issue `number`. */
  label(number: number, label: string, user?: string, repo?: string): Promise<Received<LabeledCommand>>;
  unlabel(number: number, label: string, user?: string): Promise<Received>;
  closeIssue(number: number, user?: string): Promise<Received>;
  closePull(number: number, user?: string): Promise<Received>;
  /** `user` presses "Re-run" on check run `checkRunId` of `repo`. */
  rerequest(checkRunId: number, repo: string, user?: string): Promise<Received>;
  /** The worker handles a gesture (again, when given the same one twice), and the acknowledgements it let run on finish. */
  handle(received: Received): Promise<string>;
  /** The worker handles a label. */
  start(received: Received<LabeledCommand>): Promise<string>;
  /** Lisa's answers to commands on issue or pull request `number`, oldest first, without their markers. */
  replies(number: number, repo?: string): string[];
  /** How many requests GitHub has received so far: `writesSince` looks after it. */
  mark(): number;
  /** The writes Lisa made to GitHub after `mark`, as `METHOD route`. */
  writesSince(mark: number): string[];
}

const REPLY_MARKER = /^<!-- lisa:reply delivery=[^>]+ -->\n/;

function triaged<T>(triage: Triage<T>, delivery: Delivery): Received<T> {
  if ("ignored" in triage) throw new Error(`Lisa's handler ignored the ${delivery.event} delivery: ${triage.ignored}`);
  return { deliveryId: delivery.id, gesture: triage.command };
}

const split = (repo: string) => {
  const [owner = "", name = ""] = repo.split("/");
  return { owner, repo: name };
};

/** The emulator with its repositories and people, made once per file; `begin()` a store and controls per test. */
export function useCommandWorld(): { begin(): Promise<CommandWorld> } {
  let github: GitHubEmulator;
  let port: GitHubPort;
  const heads = new Map<string, string>();
  const headOf = (repo: string) => {
    const sha = heads.get(repo);
    if (!sha) throw new Error(`no Lisa commit in ${repo}: only ${[...heads.keys()].join(" and ")} have pull requests`);
    return sha;
  };
  beforeAll(async () => {
    ({ github, port } = inProcessGitHub());
    const files = { "README.md": "# Service\n" };
    await github.createRepo(REPO, { files });
    await github.createRepo(OTHER, { files });
    await github.createRepo(ONE_PASS, { files, config: "limits:\n  max_passes: 1\n" });
    await github.createRepo(BROKEN, { files, config: "limits:\n  max_passes: many\n" });
    await github.createRepo(MULTI, { files, config: `repos:\n  - repo: ${MULTI}\n  - repo: ${OTHER}\n` });
    await github.createRepo(CHECKS, { files });
    for (const repo of [REPO, ONE_PASS, BROKEN, MULTI, CHECKS]) github.addCollaborator(repo, WRITER, "write");
    github.addCollaborator(REPO, READER, "read");
    // Lisa's commit, pushed once: each pull request's branch points at it (a git ref per test, no push).
    for (const repo of [REPO, CHECKS]) {
      gitIn(github.gitDir(repo), "branch", "lisa-work", "main");
      const { sha } = await github.pushCommit(repo, "lisa-work", {
        files: { "health.ts": "export const health = () => 'ok';\n" },
        message: "Add health()",
        user: "lisa[bot]",
      });
      heads.set(repo, sha);
    }
  });
  const openStore = useMemoryStore();

  return {
    async begin() {
      const opened = openStore();
      const store = opened.store;
      const deps = { ...opened.deps, github: async () => port } as CoreDeps;
      const log = fakeControls();

      const issue = async (repo = REPO) =>
        (await github.createIssue(repo, { title: "Add a health endpoint", user: AUTHOR })).number;

      async function runAt(state: RunState, options: RunOptions = {}): Promise<RunSetup> {
        const repo = options.repo ?? REPO;
        const number = await issue(repo);
        const { owner, repo: name } = split(repo);
        const branch = `lisa/${number}-add-a-health-endpoint`;
        const planned = state === "plan_review";
        const steps = planned
          ? [{ position: 0, owner, repo: name, branch, baseBranch: null, scope: null }]
          : [
              { position: 1, owner, repo: name, branch, baseBranch: "main", scope: null },
              ...(options.twoSteps ? [{ position: 2, ...split(OTHER), branch, baseBranch: "main", scope: null }] : []),
            ];
        const run = await store.runs.create(
          {
            installation_id: github.installationId,
            owner,
            repo: name,
            issue_number: number,
            issue_title: "Add a health endpoint",
            issue_body: "",
            requested_by: AUTHOR,
            config: options.config ?? {},
          },
          steps,
        );
        const pass = run && (await store.passes.current(run.id));
        const [step, other] = run ? await store.steps.of(run.id) : [];
        if (!run || !pass || !step) throw new Error("the run was not created");
        const setup: RunSetup = { runId: run.id, passId: pass.id, issue: number, stepId: step.id };
        if (other) setup.otherStepId = other.id;
        const stepIds = [step.id, ...(other ? [other.id] : [])];
        if (options.pullRequest) {
          const headSha = headOf(repo);
          gitIn(github.gitDir(repo), "branch", branch, headSha);
          const pull = await port.ensurePullRequest(
            { owner, repo: name },
            { title: "Add a health endpoint", body: "", head: branch, base: "main" },
          );
          await store.steps.record(step.id, { pr_number: pull.number, pr_url: pull.url, pr_state: "open", head_sha: headSha });
          setup.pull = pull.number;
        }
        if (state !== "queued") {
          await store.runs.claim("worker-1", run.id);
          await store.passes.transition(pass.id, "start");
          if (planned) {
            if (!(await changes.awaitPlanReview(store, run.id, pass.id))) throw new Error("no plan review");
          } else {
            await store.passes.transition(pass.id, "planned");
            for (const id of stepIds) await store.steps.move(id, "start");
          }
        }
        if (other) {
          // The second step's pull request, open on OTHER since an earlier pass (known to the store only).
          await store.steps.record(other.id, { pr_number: 1, pr_url: `https://github.com/${OTHER}/pull/1`, pr_state: "open" });
        }
        if (state === "blocked") {
          for (const id of stepIds) await store.steps.move(id, "block");
          if (!(await changes.blockRun(store, run.id, pass.id))) throw new Error("not blocked");
        }
        if (state === "failed") {
          if (!(await changes.failRun(store, run.id, "git could not fetch", [{ id: step.id, error: "fetch failed" }])))
            throw new Error("not failed");
        }
        if (state === "stopped") {
          if (!(await changes.abortRun(store, run.id, pass.id, { actor: WRITER }))) throw new Error("not stopped");
        }
        if (["review", "accepted", "closed"].includes(state)) {
          for (const id of stepIds) await store.steps.move(id, "deliver");
          await store.passes.transition(pass.id, "built");
          const outcome = { recommendation: null, refinements: options.refinements ?? [], open_questions: [] };
          const at = { runId: run.id, passId: pass.id, worker: "worker-1", outcome, config: {}, maxPasses: 9 };
          if (!(await changes.openGate(store, at))) throw new Error("not in review");
          if (state === "accepted" && !(await store.runs.accept(run.id, { by: WRITER, via: "approval" })))
            throw new Error("not accepted");
          if (state === "closed" && !(await store.runs.transition(run.id, "close"))) throw new Error("not closed");
        }
        if ((await store.runs.get(run.id))?.state !== state) throw new Error(`the run is not ${state}`);
        await publishRunState(deps, port, run.id);
        return setup;
      }

      const world: CommandWorld = {
        github,
        port,
        store,
        deps,
        log,
        headSha: headOf(REPO),
        headOf,
        issue,
        runAt,
        async comment(number, body, user = WRITER, repo = REPO) {
          const delivery = await github.commentOnIssue(repo, number, body, user);
          return triaged(onIssueComment(delivery.payload as never), delivery);
        },
        async review(number, review) {
          const delivery = await github.submitReview(REPO, number, { user: WRITER, ...review });
          return triaged(onPullRequestReview(delivery.payload as never), delivery);
        },
        async inline(number, inline) {
          const delivery = await github.commentInline(REPO, number, {
            path: "health.ts",
            line: inline.line ?? 1,
            body: inline.body,
            user: inline.user ?? WRITER,
            ...(inline.inReplyTo === undefined ? {} : { inReplyTo: inline.inReplyTo }),
          });
          const triage = onPullRequestReviewComment(delivery.payload as never);
          return "ignored" in triage ? null : { deliveryId: delivery.id, gesture: triage.command };
        },
        async label(number, label, user = WRITER, repo = REPO) {
          const delivery = await github.labelIssue(repo, number, label, user);
          return triaged(onIssueLabeled(delivery.payload as never), delivery);
        },
        async unlabel(number, label, user = WRITER) {
          const delivery = await github.unlabelIssue(REPO, number, label, user);
          return triaged(onIssueClosedOrUnlabeled(delivery.payload as never), delivery);
        },
        async closeIssue(number, user = WRITER) {
          const delivery = await github.closeIssue(REPO, number, user);
          return triaged(onIssueClosedOrUnlabeled(delivery.payload as never), delivery);
        },
        async closePull(number, user = WRITER) {
          const delivery = await github.closePull(REPO, number, user);
          return triaged(onPullRequest(delivery.payload as never), delivery);
        },
        async rerequest(checkRunId, repo, user = WRITER) {
          const delivery = await github.rerequestCheckRun(repo, checkRunId, user);
          return triaged(
            onCheckRerequested(delivery.payload as never, { appId: github.appId, deliveryId: delivery.id }),
            delivery,
          );
        },
        async handle({ deliveryId, gesture }) {
          const outcome = await handleGesture(deps, deliveryId, gesture, log.controls);
          await log.settled();
          return outcome;
        },
        async start({ deliveryId, gesture }) {
          const outcome = await startRun(deps, deliveryId, gesture, log.controls);
          await log.settled();
          return outcome;
        },
        replies(number, repo = REPO) {
          return github
            .comments(repo, number)
            .filter((c) => REPLY_MARKER.test(c.body))
            .map((c) => c.body.replace(REPLY_MARKER, ""));
        },
        mark: () => github.requests().length,
        writesSince(mark) {
          return github
            .requests()
            .slice(mark)
            .filter((r) => r.method !== "GET")
            .map((r) => `${r.method} ${r.route}`);
        },
      };
      return world;
    },
  };
}
