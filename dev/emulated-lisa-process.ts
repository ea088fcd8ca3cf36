// Lisa in a process of its own against a GitHub emulator running elsewhere (the test's process), so
// a test can SIGKILL it at any point of a pass and start another on the same data directory.
// Usage: node emulated-lisa-process.ts '<json options>'; writes the webhook port to `portFile`.
import { renameSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createLisa } from "../src/app.ts";
import type { LisaRole } from "../src/http/operator-endpoints.ts";
import { serveLisa } from "../src/http/serve-lisa.ts";
import type { SandboxSettings } from "../src/sandbox/sandbox-settings.ts";
import { sandboxFor } from "./emulated-lisa.ts";
import { IDLE_PATH } from "./lisa-process.ts";
import { testDatabaseUrl } from "./test-database.ts";
import { createTestProbot } from "./test-probot.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as {
  emulatorUrl: string;
  gitBaseUrl: string;
  secret: string;
  dataDir: string;
  claudeBinary: string;
  portFile: string;
  /** How long runs may go on after SIGTERM (Lisa.shutdown), as LISA_SHUTDOWN_GRACE does for `npm start`. */
  shutdownGraceMs?: number;
  /** Octokit's retries on, as `npm start` has them. */
  githubRetries?: boolean;
  /** Octokit as `npm start` has it (throttling included), and writes paced through the store. */
  deployed?: boolean;
  /** A store shared with other processes (scale-out); the data directory's own otherwise. */
  databaseUrl?: string;
  role?: LisaRole;
  workerName?: string;
  leaseSeconds?: number;
  concurrency?: number;
  /** The first pause before a run GitHub failed transiently goes on; 500 ms here by default. */
  runRetryMs?: number;
  /** The agents' and gates' sandbox; the default (bubblewrap) unless said. */
  sandbox?: SandboxSettings;
  /** Where this process writes its event-loop delay (p99 and max, ms) every 100 ms; SIGUSR2 starts it afresh (the bench). */
  loopDelayFile?: string;
};
const databaseUrl = options.databaseUrl ?? testDatabaseUrl(options.dataDir);
if (options.loopDelayFile) reportLoopDelay(options.loopDelayFile);

const probot = createTestProbot({
  secret: options.secret,
  baseUrl: options.emulatorUrl,
  retries: options.githubRetries,
  deployed: options.deployed,
});
const lisa = createLisa(probot, {
  dataDir: options.dataDir,
  // As `npm start` does: command rows are signed with a key from the webhook secret, which every process shares.
  storeKey: options.secret,
  gitBaseUrl: options.gitBaseUrl,
  agentBinaries: { claude: options.claudeBinary },
  agentEnvSource: process.env,
  sandbox: options.sandbox ?? sandboxFor(process.env),
  concurrency: options.concurrency ?? 1,
  // Off unless deployed, as throttling is: the store's write pacing (1 s a write) would only slow tests down.
  paceWrites: options.deployed ?? false,
  ...(databaseUrl ? { databaseUrl } : {}),
  ...(options.role ? { role: options.role } : {}),
  ...(options.workerName ? { workerName: options.workerName } : {}),
  ...(options.leaseSeconds ? { leaseSeconds: options.leaseSeconds } : {}),
  runRetryMs: options.runRetryMs ?? 500,
  // As `lisa worker` does: a worker that lost its claim stops (see main.ts).
  onClaimLost: () => process.exit(70),
});
await lisa.start();
// The server `npm start` creates: the body limit, `/healthz` and `/metrics` beside the webhooks.
const served = await serveLisa(
  (_app, { addHandler }) => {
    addHandler(lisa.httpHandler);
    // The test's way to wait for this process as EmulatedLisa.settle waits for one in its own process.
    addHandler(async (request, response) => {
      if (request.url !== IDLE_PATH) return false;
      await lisa.idle();
      response.writeHead(204).end();
      return true;
    });
  },
  {
    probot,
    host: "127.0.0.1",
    port: 0,
    webhookPath: "/api/github/webhooks",
  },
);
// Written whole, then renamed into place: a reader polling for the file must never see it empty.
writeFileSync(`${options.portFile}.tmp`, String((served.server.address() as AddressInfo).port));
renameSync(`${options.portFile}.tmp`, options.portFile);
// As `npm start` does once it listens (the parent points the emulator's webhooks here right after).
lisa.redeliverMissed();
process.once("SIGTERM", () => {
  void lisa.shutdown(options.shutdownGraceMs ?? 8_000, () => served.close()).then(() => process.exit(0));
});

/** The main thread's event-loop delay, measured here as `npm run bench` measures its own. */
function reportLoopDelay(file: string): void {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  process.on("SIGUSR2", () => delay.reset());
  setInterval(() => {
    writeFileSync(`${file}.tmp`, JSON.stringify({ p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6 }));
    renameSync(`${file}.tmp`, file);
  }, 100).unref();
}
