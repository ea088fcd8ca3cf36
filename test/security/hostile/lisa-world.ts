import { randomUUID } from "node:crypto";
import { EMULATED_WEBHOOK_SECRET, type EmulatedLisa, startEmulatedLisa } from "../../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../../dev/fake-agent.ts";
import type { CreateRepoOptions } from "../../../emulator/github-emulator.ts";
import { signature } from "../../../emulator/webhooks.ts";
import { gitIn } from "../../support/git-fixtures.ts";

// Lisa as deployed, against the GitHub emulator, for hostile inputs that come through GitHub:
// signed webhooks, comments, reviews and labels by people of each role.

/** What the scripted agent does when nothing else is asked: a small change and its manifest. */
export const SMALL_CHANGE: FakeInvocation = {
  write: { "health.ts": "export const health = () => 'ok';\n" },
  manifest: { title: "Add a health check", what: "Adds health()." },
  result: "Added health().",
};

export interface LisaWorld {
  env: EmulatedLisa;
  agent: ReturnType<typeof createFakeClaude>;
  /**
   * A new repository `acme/<name>-<n>` (or `name` as it is, when it has an owner) with a writer
   * `ann`, a maintainer `mo`, a reader `rita` and a triager `tim`.
   */
  repo(name: string, config?: string, more?: Omit<CreateRepoOptions, "config">): Promise<string>;
  /** An issue in `repo` opened by ann, labeled `lisa` by `by`, and everything it caused settled. */
  labeledIssue(repo: string, by?: string): Promise<number>;
  /** POSTs a webhook to Lisa as GitHub would, signed with `secret` (Lisa's by default); the HTTP status. */
  post(event: string, payload: object, options?: { id?: string; secret?: string | null }): Promise<number>;
  /** Comments Lisa wrote on an issue or PR. */
  lisaComments(repo: string, number: number): string[];
  /**
   * What Lisa published in `repo`: its pull requests' titles and bodies, its comments, and every
   * commit message and patch on every branch of the repository.
   */
  published(repo: string): string;
  /** Every string Lisa sent GitHub in a request body (titles, bodies, check runs' output, each edit of them), as sent. */
  written(): string[];
  stop(): Promise<void>;
}

/** Every string in a parsed JSON body. */
function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === "object") return Object.values(value).flatMap(stringsIn);
  return [];
}

/** What the world's Lisa runs with besides its environment. */
export interface WorldOptions {
  /** The least time between two writes of a live check run. */
  liveCheckIntervalMs?: number;
}

let repos = 0;

/** Lisa as deployed with a scripted agent doing `invocations` in turn; `env` is what Lisa runs with (its secrets). */
export async function startWorld(
  invocations: FakeInvocation[] = [SMALL_CHANGE],
  lisaEnv?: NodeJS.ProcessEnv,
  options: WorldOptions = {},
): Promise<LisaWorld> {
  const agent = createFakeClaude(invocations);
  const env = await startEmulatedLisa({
    claudeBinary: agent.binary,
    ...(lisaEnv ? { agentEnvSource: lisaEnv } : {}),
    ...(options.liveCheckIntervalMs === undefined ? {} : { liveCheckIntervalMs: options.liveCheckIntervalMs }),
  });
  const { github } = env;
  const written: string[] = [];
  github.beforeAnswer((request, bodies) => {
    if (request.method !== "GET") written.push(...stringsIn(bodies.request));
  });
  return {
    env,
    agent,
    async repo(name, config = "label: lisa\n", more = {}) {
      const fullName = name.includes("/") ? name : `acme/${name}-${++repos}`;
      await github.createRepo(fullName, { files: { "README.md": "# Service\n" }, config, ...more });
      github.addCollaborator(fullName, "ann", "write");
      github.addCollaborator(fullName, "mo", "maintain");
      github.addCollaborator(fullName, "rita", "read");
      github.addCollaborator(fullName, "tim", "triage");
      return fullName;
    },
    async labeledIssue(repo, by = "ann") {
      const issue = await github.createIssue(repo, { title: "Add a health check", body: "Add health().", user: "ann" });
      await github.labelIssue(repo, issue.number, "lisa", by);
      await env.settle();
      return issue.number;
    },
    async post(event, payload, options = {}) {
      const body = JSON.stringify(payload);
      const secret = options.secret === undefined ? EMULATED_WEBHOOK_SECRET : options.secret;
      const response = await fetch(env.webhookUrl, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "x-github-event": event,
          "x-github-delivery": options.id ?? randomUUID(),
          ...(secret === null ? {} : { "x-hub-signature-256": signature(secret, body) }),
        },
      });
      await response.body?.cancel();
      await env.settle();
      return response.status;
    },
    lisaComments: (repo, number) =>
      github
        .comments(repo, number)
        .filter((comment) => comment.user.type === "Bot")
        .map((comment) => comment.body),
    published(repo) {
      const texts = github.issues(repo).flatMap((issue) => [
        ...(issue.user.type === "Bot" ? [issue.title, issue.body ?? ""] : []),
        ...github
          .comments(repo, issue.number)
          .filter((comment) => comment.user.type === "Bot")
          .map((comment) => comment.body),
      ]);
      const gitDir = github.gitDir(repo);
      texts.push(gitIn(gitDir, "log", "--all", "--patch", "--text", "--format=%B"));
      return texts.join("\n");
    },
    written: () => [...written],
    stop: () => env.stop(),
  };
}

/** Runs `use` in a world started for it, and stops the world whatever `use` did. */
export async function inWorld<T>(
  use: (world: LisaWorld) => Promise<T>,
  invocations?: FakeInvocation[],
  lisaEnv?: NodeJS.ProcessEnv,
  options?: WorldOptions,
): Promise<T> {
  const world = await startWorld(invocations, lisaEnv, options);
  try {
    return await use(world);
  } finally {
    await world.stop();
  }
}

/**
 * The payload of the last webhook the emulator sent for `event` because of a person (not Lisa's own
 * labels and comments), to replay or alter.
 */
export function lastPayload(world: LisaWorld, event: string, action: string): Record<string, unknown> {
  const delivery = world.env.github
    .deliveries()
    .filter((d) => d.event === event && d.action === action && (d.payload.sender as { type: string }).type === "User")
    .at(-1);
  if (!delivery) throw new Error(`the emulator sent no ${event}.${action} by a person`);
  return structuredClone(delivery.payload);
}
