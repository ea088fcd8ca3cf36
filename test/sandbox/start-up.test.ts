import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { sandboxFor } from "../../dev/emulated-lisa.ts";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { createTestProbot } from "../../dev/test-probot.ts";
import { createLisa } from "../../src/app.ts";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.ts";
import { tempDir } from "../support/git-fixtures.ts";

/** Lisa loaded into a Probot app that never talks to GitHub: starting and stopping is all these tests do. */
function createHarness(options: { sandbox?: SandboxSettings } = {}) {
  const probot = createTestProbot({ secret: "webhook-secret" });
  const dataDir = path.join(tempDir("data"), "lisa");
  const databaseUrl = testDatabaseUrl(dataDir);
  const lisa = createLisa(probot, {
    dataDir,
    ...(databaseUrl ? { databaseUrl } : {}),
    gitBaseUrl: `file://${tempDir("remote")}`,
    agentBinaries: { claude: "/bin/false" },
    agentEnvSource: process.env,
    sandbox: options.sandbox ?? sandboxFor(undefined),
    concurrency: 1,
  });
  return { probot, lisa };
}

describe("Lisa's start-up", () => {
  it("says that agents run in the sandbox once it has started one", async () => {
    const harness = createHarness();
    await harness.probot.ready();
    const info = vi.spyOn(harness.probot.log, "info");
    await harness.lisa.start();
    await harness.lisa.stop();
    expect(info).toHaveBeenCalledWith(expect.objectContaining({ sandbox: "bwrap" }), "agents run in a bubblewrap sandbox");
  });

  it("warns loudly when the operator turned the sandbox off", async () => {
    const harness = createHarness({ sandbox: { mode: "off" } });
    await harness.probot.ready();
    const warn = vi.spyOn(harness.probot.log, "warn");
    await harness.lisa.start();
    await harness.lisa.stop();
    expect(warn).toHaveBeenCalledWith(
      { sandbox: "off" },
      expect.stringMatching(/^LISA_SANDBOX=off: agents and gate commands run WITHOUT a sandbox/),
    );
  });
});
