import type { FakeInvocation } from "../../../dev/fake-agent.ts";
import { GITHUB_BODY_LIMIT } from "../../../src/markdown/sanitize-markdown.ts";
import { rawPost } from "../../support/raw-post.ts";
import { breachIf, HELD, type HostileGroup, type HostileInput } from "./hostile-input.ts";
import { inWorld, type LisaWorld, SMALL_CHANGE } from "./lisa-world.ts";

// Input that could make Lisa hang, read what it must not, or write more than GitHub takes: files
// the agent puts where Lisa reads its plan and manifest, oversized plans and configs, oversized
// webhook bodies. Each must end within a bound, with a clear answer on the issue.

/** Longer than any of these inputs takes when Lisa holds; reaching it counts as unbounded. */
const BOUND_MS = 60_000;

/** Runs `use` in a world whose issue `acme/api` plans across `acme/api` and `acme/web`, its planner doing `plan`. */
function inPlannedWorld<T>(plan: FakeInvocation, config: string, use: (world: LisaWorld, repo: string) => Promise<T>) {
  return inWorld(
    async (world) => {
      const api = await world.repo("acme/api", `label: lisa\nrepos:\n  - repo: acme/api\n  - repo: acme/web\n${config}`);
      await world.repo("acme/web");
      return use(world, api);
    },
    [plan, SMALL_CHANGE],
  );
}

/** Labels a new issue in `repo` and waits, at most BOUND_MS, for Lisa to settle; false when it did not. */
async function settled(world: LisaWorld, repo: string): Promise<{ number: number; ended: boolean }> {
  const issue = await world.env.github.createIssue(repo, { title: "Add a health check", body: "Add health().", user: "ann" });
  await world.env.github.labelIssue(repo, issue.number, "lisa", "ann");
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    world.env.settle().then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), BOUND_MS);
    }),
  ]);
  clearTimeout(timer);
  return { number: issue.number, ended };
}

/** Lisa's comments on the issue and its PRs longer than GitHub accepts. */
const oversized = (world: LisaWorld, repo: string) =>
  world.env.github
    .issues(repo)
    .flatMap((issue) => world.lisaComments(repo, issue.number))
    .filter((body) => body.length > GITHUB_BODY_LIMIT).length;

/** Runs `planner` in a planned world and checks that the run ended, said `expected` on the issue, and wrote nothing too long. */
function planInput(name: string, attempt: string, planner: FakeInvocation, expected: RegExp, config = ""): HostileInput {
  return {
    name,
    attempt,
    run: async () => {
      return inPlannedWorld(planner, config, async (world, repo) => {
        const { number, ended } = await settled(world, repo);
        const said = world.lisaComments(repo, number).join("\n");
        return {
          ...HELD,
          unbounded: (ended && expected.test(said) ? 0 : 1) + oversized(world, repo),
          // A host file quoted on the issue is a leak of the host's.
          secretsLeaked: /root:.*:0:0:/.test(said) ? 1 : 0,
        };
      });
    },
  };
}

const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ repo: `acme/nope-${i}`, scope: "x".repeat(200), order: 0 }));

export const boundsGroup: HostileGroup = {
  name: "bounds",
  inputs: [
    planInput(
      "fifo-plan",
      "a planner that leaves a FIFO where Lisa reads its plan",
      { run: ["rm -f .lisa-plan.json; mkfifo .lisa-plan.json"], result: "Planned." },
      /\.lisa-plan\.json is not a regular file \(a FIFO\)/,
    ),
    planInput(
      "symlinked-plan",
      "a planner whose plan is a symbolic link to /etc/passwd",
      { run: ["rm -f .lisa-plan.json; ln -s /etc/passwd .lisa-plan.json"], result: "Planned." },
      /\.lisa-plan\.json is a symbolic link/,
    ),
    planInput(
      "huge-plan",
      "a planner that writes a 300 KiB plan",
      { write: { ".lisa-plan.json": JSON.stringify({ rationale: "x".repeat(300 * 1024), steps: [] }) }, result: "Planned." },
      /\.lisa-plan\.json is larger than 256 KiB/,
    ),
    planInput(
      "five-thousand-steps",
      "a planner that writes 5,000 invalid steps",
      { write: { ".lisa-plan.json": JSON.stringify({ steps: steps(5_000) }) }, result: "Planned." },
      /did not write a valid plan/,
    ),
    {
      name: "fifo-manifest",
      attempt: "an agent that leaves a FIFO where Lisa reads its manifest",
      run: async () => {
        return inWorld(
          async (world) => {
            const repo = await world.repo("fifo-manifest");
            const { ended } = await settled(world, repo);
            // The work goes on without the manifest: the PR is opened.
            return breachIf(!ended || world.env.github.pulls(repo).length !== 1, "unbounded");
          },
          [{ ...SMALL_CHANGE, manifest: undefined, run: ["mkfifo .lisa-manifest.json"] }],
        );
      },
    },
    {
      name: "ten-thousand-gates",
      attempt: "a config with 10,000 gates",
      run: async () => {
        return inWorld(async (world) => {
          const gates = Array.from({ length: 10_000 }, (_, i) => `  - test -f f${i}`).join("\n");
          const repo = await world.repo("gates", `label: lisa\ngates:\n${gates}\n`);
          const { number, ended } = await settled(world, repo);
          const said = world.lisaComments(repo, number).join("\n");
          return {
            ...HELD,
            unauthorizedRuns: world.agent.calls().length,
            unbounded: (ended && said.includes("at most 20 gates") ? 0 : 1) + oversized(world, repo),
          };
        });
      },
    },
    {
      name: "month-long-timeout",
      attempt: "a config whose session_timeout is longer than setTimeout can count (25 days)",
      run: async () => {
        return inWorld(async (world) => {
          const repo = await world.repo("timeout", "label: lisa\nlimits:\n  session_timeout: 600h\n");
          const { number, ended } = await settled(world, repo);
          const said = world.lisaComments(repo, number).join("\n");
          return { ...HELD, unbounded: ended && said.includes("longer than the most Lisa allows, 24h") ? 0 : 1 };
        });
      },
    },
    {
      name: "thirty-megabyte-webhook",
      attempt: "an unsigned 30 MiB POST to the webhook URL",
      run: async () => {
        return inWorld(async (world) => {
          const status = await rawPost(
            world.env.webhookUrl,
            { "content-type": "application/json", "content-length": String(30 * 1024 * 1024) },
            30 * 1024 * 1024,
          );
          // Lisa still answers GitHub afterwards.
          const repo = await world.repo("after-post");
          await settled(world, repo);
          return { ...HELD, unbounded: status === 413 && world.env.github.pulls(repo).length === 1 ? 0 : 1 };
        });
      },
    },
  ],
};
