import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attack, createWorld, HOST, removeWorlds, SECRETS } from "./attack-world.ts";
import { type AttackRun, outcomeOf, SANDBOX_CASES, type World } from "./sandbox-cases.ts";

// The hostile agent's attempts inside the sandbox are inputs of the hostile-input suite
// (hostile/sandbox.ts). Here the same agent runs without it: every attempt must succeed, so that
// none of those inputs holds merely because the agent could not have got through anyway.

let unconfined: { world: World; run: AttackRun };
// Another process on the host with a WEBHOOK_SECRET of its own, as the README's emulator flow leaves
// one: started first, it comes first among /proc's entries, and the agent must still sign with Lisa's.
let decoy: ChildProcess;

beforeAll(async () => {
  decoy = spawn("sleep", ["300"], { env: { PATH: process.env.PATH, WEBHOOK_SECRET: "another-process-secret" }, stdio: "ignore" });
  const world = createWorld();
  unconfined = { world, run: await attack(world, "off") };
}, 120_000);

afterAll(() => {
  decoy.kill("SIGKILL");
  removeWorlds();
});

describe("the same agent with LISA_SANDBOX=off (the control: every probe above can succeed)", () => {
  it.each(SANDBOX_CASES.filter((c) => c.leaksWithoutSandbox(HOST)))("can $attempt ($name)", (sandboxCase) => {
    expect(outcomeOf(unconfined.run, sandboxCase)).toMatch(/^leaked/);
    if (sandboxCase.hostCheck) expect(sandboxCase.hostCheck(unconfined.world)).toBeDefined();
  });

  it("reads the installation token from Lisa's later git command through its setsid child", () => {
    expect(unconfined.run.stolen).toContain(`Basic ${Buffer.from(`x-access-token:${SECRETS.token}`).toString("base64")}`);
  });

  it("signs a webhook with Lisa's own secret, which Lisa would take as GitHub's", () => {
    const signature = createHmac("sha256", SECRETS.webhook).update('{"action":"labeled"}').digest("hex");
    expect(unconfined.run.report).toContain(`forge-webhook\tleaked\tX-Hub-Signature-256: sha256=${signature}`);
  });
});
