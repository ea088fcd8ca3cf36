import { describe, expect, it, vi } from "vitest";
import { tempDir } from "../support/git-fixtures.ts";
import { createHarness } from "../support/lisa-harness.ts";

describe("Lisa's start-up", () => {
  it("says that agents run in the sandbox once it has started one", async () => {
    const harness = createHarness({ remoteRoot: tempDir("remote"), claudeBinary: "/bin/false" });
    await harness.probot.ready();
    const info = vi.spyOn(harness.probot.log, "info");
    await harness.lisa.start();
    await harness.lisa.stop();
    expect(info).toHaveBeenCalledWith(expect.objectContaining({ sandbox: "bwrap" }), "agents run in a bubblewrap sandbox");
  });

  it("warns loudly when the operator turned the sandbox off", async () => {
    const harness = createHarness({ remoteRoot: tempDir("remote"), claudeBinary: "/bin/false", sandbox: { mode: "off" } });
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
