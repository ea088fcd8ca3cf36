import path from "node:path";
import type { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
import type { CreateRepoOptions } from "../../emulator/github-emulator.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "./git-fixtures.ts";
import type { useLisaChildren } from "./lisa-child.ts";
import { trackingBody } from "./tracking-body.ts";

/**
 * Lisa in a process of its own, SIGKILLed once `agent`'s hanging fix session (its second) starts,
 * and started again on the same data: returns once the tracking comment says `ended` or "Ready for
 * review", with what the sessions of the step's record were (read after Lisa is killed for good).
 */
export async function killDuringFixAndRestart(
  lisa: ReturnType<typeof useLisaChildren>,
  agent: ReturnType<typeof createFakeClaude>,
  repo: { name: string; options: CreateRepoOptions; ended: string },
) {
  const emulator = await lisa.emulator();
  await emulator.createRepo(repo.name, repo.options);
  emulator.addCollaborator(repo.name, "ann", "write");
  const dataDir = path.join(tempDir("fix-restart-data"), "lisa");
  const first = await lisa.start({ dataDir, claudeBinary: agent.binary });

  const issue = await emulator.createIssue(repo.name, { title: "Add a health endpoint", body: "", user: "ann" });
  await emulator.labelIssue(repo.name, issue.number, "lisa", "ann");
  const pids = await waitFor("the fix session to start", () => agent.hangingPids(), 60_000);
  first.kill("SIGKILL");
  await new Promise((resolve) => first.once("exit", resolve));

  await lisa.start({ dataDir, claudeBinary: agent.binary });
  const tracking = () => trackingBody(emulator, repo.name, issue.number);
  await waitFor(
    "the step to block or reach review",
    () => tracking().includes(repo.ended) || tracking().includes("Ready for review"),
    60_000,
  );
  await emulator.waitForWebhooks();
  return { emulator, pids, tracking, dataDir };
}

/** The blocked run's step and its sessions (purpose, state), read from the store once Lisa is gone. */
export async function blockedStepOf(dataDir: string) {
  const store = new Store(testStoreLocation(dataDir));
  const [run] = await store.runs.inState("blocked");
  const [step] = (await store.steps.of(run?.id ?? 0)).filter((s) => s.position > 0);
  return { store, step, sessions: (await store.sessions.of(step?.id ?? 0)).map((s) => [s.purpose, s.state]) };
}
