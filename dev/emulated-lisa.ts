import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createGitHubEmulator, type GitHubEmulator } from "../emulator/github-emulator.ts";
import { createLisa, type Lisa } from "../src/app.ts";
import { GITHUB_MAX_PAYLOAD, refuseUnboundedBody } from "../src/http/body-limit.ts";
import type { LisaRole } from "../src/http/operator-endpoints.ts";
import type { SandboxSettings } from "../src/sandbox/sandbox-settings.ts";
import { tempDir } from "./temp-dir.ts";
import { testDatabaseUrl } from "./test-database.ts";
import { createTestProbot, TEST_APP_ID } from "./test-probot.ts";

/** The webhook secret the emulator signs with and Lisa checks; tests that forge webhooks need it. */
export const EMULATED_WEBHOOK_SECRET = "emulated-webhook-secret-of-at-least-32-bytes";

export interface EmulatedLisa {
  github: GitHubEmulator;
  lisa: Lisa;
  dataDir: string;
  /** Where the emulator sends webhooks: Lisa's Probot middleware. */
  webhookUrl: string;
  /** Waits until every webhook has been answered and Lisa has handled what they caused. */
  settle(): Promise<void>;
  /** Stops Lisa and its webhook server and leaves the emulator running, for another Lisa to start on it and `dataDir`. */
  stopLisa(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Lisa as deployed, against the GitHub emulator: webhooks arrive signed over HTTP at Probot's
 * middleware, the API calls go to the emulator, and git to its bare repositories.
 */
export async function startEmulatedLisa(options: {
  claudeBinary: string;
  agentEnvSource?: NodeJS.ProcessEnv;
  /** Load Lisa into Probot; false leaves a bare Probot, the baseline of the webhook benchmark. */
  lisa?: boolean;
  /** What bare Probot (`lisa: false`) does with each `issues` delivery; nothing by default. */
  bareHandler?: (delivery: { id: string; payload: unknown }) => Promise<void>;
  /** Told how long each webhook took to answer, in milliseconds, measured at the server. */
  onAnswered?: (ms: number) => void;
  /** The first pause before a command GitHub failed is tried again. */
  commandRetryMs?: number;
  /** How often tracking comments GitHub refused are written again. */
  publishRetryMs?: number;
  /** The least time between two writes of a live check run. */
  liveCheckIntervalMs?: number;
  /** The first pause before a run GitHub failed transiently goes on; 200 ms here by default. */
  runRetryMs?: number;
  /** Lisa's store on PostgreSQL; by default the suite's choice (LISA_TEST_DATABASE_URL), else SQLite. */
  databaseUrl?: string;
  role?: LisaRole;
  /** Octokit as `npm start` has it (retries, secondary-limit answers), and writes paced through the store. */
  deployed?: boolean;
  /** Runs at once (LISA_CONCURRENCY); 1 unless said. */
  concurrency?: number;
  /** The installation's permissions, when not all of app.yml's (an owner who has not accepted a new one). */
  permissions?: Readonly<Record<string, "read" | "write">>;
  /** Disk the worktrees of failed and blocked runs may keep (LISA_KEPT_WORKTREES_MB). */
  keptWorktreesBytes?: number;
  /** Serve /metrics and /healthz there instead of beside the webhooks (LISA_METRICS_ADDRESS). */
  metricsAddress?: { host: string; port: number };
  /** An emulator already running (one an earlier, killed Lisa used), stopped with this Lisa; a new one otherwise. */
  github?: GitHubEmulator;
  /** The data directory of an earlier Lisa to start on; a fresh one otherwise. */
  dataDir?: string;
  /** The agents' sandbox; by default bubblewrap with the agent environment's home template (sandboxFor). */
  sandbox?: SandboxSettings;
  /** Requests the test itself sends to paths no route answers, which `stop` lets pass (method and path). */
  unroutedAllowed?: RegExp;
  /** Lisa's clock, when a test moves time on. */
  now?: () => number;
}): Promise<EmulatedLisa> {
  const github =
    options.github ??
    createGitHubEmulator({
      reposRoot: tempDir("emulated-repos"),
      webhookSecret: EMULATED_WEBHOOK_SECRET,
      ...(options.permissions ? { permissions: options.permissions } : {}),
    });
  if (!options.github) await github.start();
  const probot = createTestProbot({ secret: EMULATED_WEBHOOK_SECRET, baseUrl: github.url, deployed: options.deployed });
  const dataDir = options.dataDir ?? path.join(tempDir("emulated-data"), "lisa");
  const databaseUrl = options.databaseUrl ?? testDatabaseUrl(dataDir);
  const lisa =
    (options.lisa ?? true)
      ? createLisa(probot, {
          dataDir,
          appId: TEST_APP_ID,
          // As deployed: command rows are signed with a key from the webhook secret.
          storeKey: EMULATED_WEBHOOK_SECRET,
          ...(options.metricsAddress ? { metricsAddress: options.metricsAddress } : {}),
          gitBaseUrl: github.gitBaseUrl,
          agentBinaries: { claude: options.claudeBinary },
          agentEnvSource: options.agentEnvSource ?? process.env,
          sandbox: options.sandbox ?? sandboxFor(options.agentEnvSource),
          concurrency: options.concurrency ?? 1,
          // As deployed, writes are paced through the store; elsewhere, as throttling, not at all.
          paceWrites: options.deployed ?? false,
          ...(options.commandRetryMs === undefined ? {} : { commandRetryMs: options.commandRetryMs }),
          ...(options.publishRetryMs === undefined ? {} : { publishRetryMs: options.publishRetryMs }),
          ...(options.liveCheckIntervalMs === undefined ? {} : { liveCheckIntervalMs: options.liveCheckIntervalMs }),
          runRetryMs: options.runRetryMs ?? 200,
          ...(options.keptWorktreesBytes === undefined ? {} : { keptWorktreesBytes: options.keptWorktreesBytes }),
          ...(databaseUrl ? { databaseUrl } : {}),
          ...(options.role ? { role: options.role } : {}),
          ...(options.now ? { now: options.now } : {}),
        })
      : undefined;
  await lisa?.start();
  const middleware = await probot.getNodeMiddleware({ path: "/api/github/webhooks" });
  const server: Server = createServer((req, res) => {
    if (refuseUnboundedBody(req, res, GITHUB_MAX_PAYLOAD)) return;
    const started = process.hrtime.bigint();
    res.on("finish", () => options.onAnswered?.(Number(process.hrtime.bigint() - started) / 1e6));
    // Lisa's /healthz and /metrics, as `npm start` serves them beside the webhook path.
    void (async () => {
      if (await lisa?.httpHandler(req, res)) return;
      // Any other path is a 404, as `npm start`'s server answers it (src/http/serve-lisa.ts).
      if (!(await middleware(req, res))) res.writeHead(404).end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const webhookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
  github.setWebhookUrl(webhookUrl);
  lisa?.redeliverMissed();

  if (!lisa) probot.on("issues", async (context) => await options.bareHandler?.({ id: context.id, payload: context.payload }));
  return {
    github,
    // Only the benchmark's baseline runs without Lisa, and it never asks for her.
    lisa: lisa as Lisa,
    dataDir,
    webhookUrl,
    async settle() {
      // Lisa's own API calls send webhooks too; settle until neither side has anything under way.
      for (let i = 0; i < 5; i++) {
        await github.waitForWebhooks();
        await lisa?.idle();
      }
    },
    async stopLisa() {
      await lisa?.stop();
      await new Promise((resolve) => server.close(resolve));
    },
    async stop() {
      await lisa?.stop();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
      await github.stop();
      // As with HTTP mocks that fail on an unmatched request: Lisa asking for what the emulator has no route for is a test failure.
      assertAllRouted(github, options.unroutedAllowed);
    },
  };
}

/**
 * Throws, naming each, when the emulator had no route for some request it received (it answered
 * them 404, which Lisa may have caught and gone on from), but those `allowed` matches as `METHOD path`.
 */
export function assertAllRouted(github: GitHubEmulator, allowed?: RegExp): void {
  const unrouted = github
    .requests()
    .filter((r) => r.route === null)
    .map((r) => `${r.method} ${r.path}`)
    .filter((request) => !allowed?.test(request));
  if (unrouted.length > 0) throw new Error(`requests to the GitHub emulator that no route answers:\n${unrouted.join("\n")}`);
}

/**
 * Lisa's default sandbox, with the home template the test's agent environment names in
 * `LISA_AGENT_HOME` and its `LISA_ALLOW_PRIVATE_MODEL_API`, as an operator's environment would
 * (neither reaches the agent).
 */
export function sandboxFor(agentEnvSource: NodeJS.ProcessEnv | undefined): SandboxSettings {
  return {
    mode: "bwrap",
    homeTemplate: agentEnvSource?.LISA_AGENT_HOME,
    privateModelApi: agentEnvSource?.LISA_ALLOW_PRIVATE_MODEL_API === "true",
  };
}
