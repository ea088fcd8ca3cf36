import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createGitHubEmulator, type GitHubEmulator } from "../emulator/github-emulator.ts";
import { createLisa, type Lisa } from "../src/app.ts";
import { sandboxFor } from "./emulated-lisa.ts";
import { tempDir } from "./temp-dir.ts";
import { createTestProbot } from "./test-probot.ts";

const SECRET = "scaled-webhook-secret-of-at-least-32-bytes";

export interface ScaledLisa {
  github: GitHubEmulator;
  web: Lisa;
  workers: Lisa[];
  stop(): Promise<void>;
}

/**
 * Lisa scaled out in one process, for the throughput benchmark: a `web` Lisa that receives the
 * emulator's webhooks and `workers` worker Lisas, each with its own data directory, sharing the
 * PostgreSQL store at `databaseUrl` (a fresh schema). Agents and git run in processes of their own,
 * so the workers' event loop is not what the measurement waits on.
 */
export async function startScaledLisa(options: {
  databaseUrl: string;
  workers: number;
  claudeBinary: string;
  concurrency?: number;
  /** Octokit as `npm start` has it, and writes paced through the store, in every process. */
  deployed?: boolean;
}): Promise<ScaledLisa> {
  const github = createGitHubEmulator({ reposRoot: tempDir("scaled-repos"), webhookSecret: SECRET });
  await github.start();
  const lisaFor = (role: "web" | "worker", name: string) =>
    createLisa(createTestProbot({ secret: SECRET, baseUrl: github.url, deployed: options.deployed }), {
      dataDir: path.join(tempDir(`scaled-${name}`), "lisa"),
      // As deployed: every process signs and checks command rows with a key from the shared webhook secret.
      storeKey: SECRET,
      gitBaseUrl: github.gitBaseUrl,
      agentBinaries: { claude: options.claudeBinary },
      agentEnvSource: process.env,
      sandbox: sandboxFor(process.env),
      concurrency: options.concurrency ?? 1,
      databaseUrl: options.databaseUrl,
      role,
      workerName: name,
      // Off as throttling is, unless deployed: the store's write pacing (1 s a write) would only slow the figure down.
      paceWrites: options.deployed ?? false,
    });
  const probot = createTestProbot({ secret: SECRET, baseUrl: github.url, deployed: options.deployed });
  const web = createLisa(probot, {
    dataDir: path.join(tempDir("scaled-web"), "lisa"),
    storeKey: SECRET,
    gitBaseUrl: github.gitBaseUrl,
    databaseUrl: options.databaseUrl,
    role: "web",
    paceWrites: options.deployed ?? false,
  });
  await web.start();
  const workers = Array.from({ length: options.workers }, (_, i) => lisaFor("worker", `worker-${i + 1}`));
  for (const worker of workers) await worker.start();
  const middleware = await probot.getNodeMiddleware({ path: "/api/github/webhooks" });
  const server: Server = createServer((req, res) => void middleware(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  github.setWebhookUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`);
  return {
    github,
    web,
    workers,
    async stop() {
      for (const worker of workers) await worker.stop();
      await web.stop();
      await new Promise((resolve) => server.close(resolve));
      await github.stop();
    },
  };
}
