import { describe, expect, it } from "vitest";
import { onCheckRerequested } from "../../src/handlers/on-check-rerequested.ts";

const LISA = 42;

const payload = (part: "check_run" | "check_suite", appId: number, name = "Lisa") => ({
  action: "rerequested",
  installation: { id: 7 },
  repository: { name: "api", owner: { login: "acme" } },
  sender: { login: "ann" },
  [part]: {
    id: 900,
    head_sha: "abc1234",
    name,
    app: { id: appId },
    conclusion: "success",
    output: { title: "Ready for review", summary: "Gates passed." },
    pull_requests: [{ number: 3, head: { ref: "lisa/1-health" } }],
  },
});

describe("onCheckRerequested", () => {
  it("keeps Re-run on Lisa's check run, with what the run says now", () => {
    expect(onCheckRerequested(payload("check_run", LISA), { appId: LISA, deliveryId: "d1" })).toEqual({
      key: "check:run:900:rerequested:d1",
      command: expect.objectContaining({
        kind: "check",
        number: 3,
        headSha: "abc1234",
        checkRunId: 900,
        shown: { conclusion: "success", title: "Ready for review", summary: "Gates passed." },
      }),
    });
  });

  it("keeps Re-run all on Lisa's suite, which names no check run", () => {
    expect(onCheckRerequested(payload("check_suite", LISA), { appId: LISA, deliveryId: "d2" })).toMatchObject({
      command: { kind: "check", checkRunId: null, shown: null },
    });
  });

  it("ignores another App's check, even one named Lisa", () => {
    expect(onCheckRerequested(payload("check_run", 99), { appId: LISA, deliveryId: "d3" })).toEqual({
      ignored: "another App's check",
    });
  });
});
