import path from "node:path";
import type { Probot } from "probot";
import { sandboxFor } from "../../dev/emulated-lisa.ts";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { createTestProbot } from "../../dev/test-probot.ts";
import { createLisa, type Lisa } from "../../src/app.ts";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.ts";
import { tempDir } from "./git-fixtures.ts";

export interface Harness {
  probot: Probot;
  lisa: Lisa;
  dataDir: string;
}

/** A Probot app with Lisa loaded, on a fresh data directory unless one is given, retries off so failures show at once. */
export function createHarness(options: {
  remoteRoot: string;
  claudeBinary: string;
  dataDir?: string;
  agentEnvSource?: NodeJS.ProcessEnv;
  sandbox?: SandboxSettings;
  /** Lisa's clock, when a test moves time on. */
  now?: () => number;
}): Harness {
  const probot = createTestProbot({ secret: "webhook-secret" });
  const dataDir = options.dataDir ?? path.join(tempDir("data"), "lisa");
  const databaseUrl = testDatabaseUrl(dataDir);
  const lisa = createLisa(probot, {
    dataDir,
    ...(databaseUrl ? { databaseUrl } : {}),
    gitBaseUrl: `file://${options.remoteRoot}`,
    agentBinaries: { claude: options.claudeBinary },
    agentEnvSource: options.agentEnvSource ?? process.env,
    sandbox: options.sandbox ?? sandboxFor(options.agentEnvSource),
    concurrency: 1,
    // As throttling is off in tests: the store's write pacing (1 s a write) would only slow them down.
    paceWrites: false,
    ...(options.now ? { now: options.now } : {}),
  });
  return { probot, lisa, dataDir };
}

/** The real `issues.labeled` example payload from @octokit/webhooks-examples, delivered to installation 2. */
export async function labeledPayload() {
  const { default: examples } = await import("@octokit/webhooks-examples/api.github.com/index.json", { with: { type: "json" } });
  const issues = (examples as { name: string; examples: { action: string }[] }[]).find((e) => e.name === "issues");
  const example = issues?.examples.find((e) => e.action === "labeled");
  if (!example) throw new Error("no issues.labeled example in @octokit/webhooks-examples");
  return { ...structuredClone(example), installation: { id: 2, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMg==" } } as never;
}

/** The repository and issue of the `issues.labeled` example payload. */
export const OWNER = "Codertocat";
export const REPO = "Hello-World";
export const BRANCH = "lisa/1-spelling-error-in-the-readme-file";
/** An installation token in GitHub's long stateless format, as the fake API hands it out. */
export const TOKEN = `ghs_123456_${"eyJhbGciOiJSUzI1NiJ9".repeat(4)}.${"eyJpc3MiOiJnaXRodWIifQ".repeat(4)}.c2lnbmF0dXJl`;

/** Delivers the labeled example payload and waits until Lisa has handled everything it caused. */
export async function deliverLabeled(harness: Harness, id = "delivery-1"): Promise<void> {
  await harness.probot.receive({ id, name: "issues", payload: await labeledPayload() });
  await harness.lisa.idle();
}
