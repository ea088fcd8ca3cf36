import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EMULATED_WEBHOOK_SECRET, type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { cacheStats, clearSetupCache, listEntries, setupCacheRoot } from "../../src/workspace/setup-cache.ts";
import { installationTokens } from "../support/hello-world.ts";

// Issue 41: `setup:` prepares the worktree before the first agent session, and the cache gives the
// next worktree what it made. The "dependency" is a module set-up writes into node_modules offline,
// and the gate needs it, as a project's `npm test` needs what `npm install` put there.

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

const REPO = "acme/shop";
const SETUP =
  "mkdir -p node_modules/greet && echo 'module.exports = () => \"hello\";' > node_modules/greet/index.js && env > node_modules/.setup-env";
/** Secrets in Lisa's environment that set-up must never see. */
const MODEL_KEY = "sk-ant-api03-setupMustNeverSeeThisKey000000";
const GITHUB_TOKEN = "ghp_setupMustNeverSeeThisToken0000000000";
const GATE = "node -e \"if (require('greet')() !== 'hello') process.exit(1)\"";
const config = (setup: string[], extra = "") =>
  `label: lisa\n${setup.length ? `setup:\n${setup.map((s) => `  - ${JSON.stringify(s)}`).join("\n")}\n` : ""}gates:\n  - ${JSON.stringify(GATE)}\nlimits:\n  max_iterations: 1\n${extra}`;

const work: FakeInvocation = {
  write: { "src/shop.js": "export const shop = true;\n" },
  manifest: { title: "Add the shop", what: "Adds the shop." },
};

async function start(configText: string, invocations: FakeInvocation[] = [work]) {
  const agent = createFakeClaude(invocations);
  env = await startEmulatedLisa({
    claudeBinary: agent.binary,
    agentEnvSource: { ...process.env, ANTHROPIC_API_KEY: MODEL_KEY, GITHUB_TOKEN },
  });
  await env.github.createRepo(REPO, {
    files: { "README.md": "# Shop\n", ".gitignore": "node_modules/\n", "package.json": '{"name":"shop","private":true}\n' },
    config: configText,
  });
  return { agent, e: env };
}

async function label(e: EmulatedLisa, title: string): Promise<number> {
  const issue = await e.github.createIssue(REPO, { title, body: "Please.", user: "acme" });
  await e.github.labelIssue(REPO, issue.number, "lisa", "acme");
  await e.settle();
  return issue.number;
}

const tracking = (e: EmulatedLisa, issue: number) =>
  e.github.comments(REPO, issue).find((c) => c.body.includes("lisa:tracking"))?.body ?? "";

describe("setup: in .github/lisa.yml", () => {
  it("lets a gate that needs node_modules pass because set-up ran before the agent", async () => {
    const { agent, e } = await start(config([SETUP]));
    const issue = await label(e, "Add a shop");

    expect(tracking(e, issue)).not.toContain("What went wrong");
    expect(agent.calls()).toHaveLength(1);
    expect(e.github.pulls(REPO)).toHaveLength(1);
    expect(await e.lisa.store.runs.inState("review")).toHaveLength(1);
    // What set-up made is not part of the pull request: it is ignored, and cached instead.
    expect(await e.github.readFile(REPO, "node_modules/greet/index.js", e.github.pulls(REPO)[0]?.head.ref)).toBeUndefined();
  });

  it("fails the gate on the missing module without set-up", async () => {
    const { e } = await start(config([]));
    const issue = await label(e, "Add a shop");

    expect(e.github.pulls(REPO)).toHaveLength(0);
    expect(tracking(e, issue)).toContain("Cannot find module 'greet'");
  });

  it("fails the run on a failing set-up, with its command, exit and output, and runs no agent", async () => {
    const failing = "echo 'npm ERR! 404 Not Found - left-pad@9.9.9'; exit 7";
    const { agent, e } = await start(config([failing]));
    const issue = await label(e, "Add a shop");

    expect(agent.calls()).toHaveLength(0);
    expect(await e.lisa.store.runs.inState("failed")).toHaveLength(1);
    const body = tracking(e, issue);
    expect(body).toContain("Set-up failed in acme/shop: `echo 'npm ERR! 404 Not Found - left-pad@9.9.9'; exit 7` exited with 7.");
    expect(body).toMatch(/```\w*\nnpm ERR! 404 Not Found - left-pad@9\.9\.9\n```/);
    expect(body).toContain("then comment `/lisa retry`");
  });

  it("restores set-up from the cache for the next issue, untouched by what the first one's agent did to it", async () => {
    // The first agent edits one dependency file and deletes it, inside its restored-or-installed tree.
    const { agent, e } = await start(config([SETUP]), [
      {
        ...work,
        run: ["echo 'module.exports = () => \"poisoned\";' > node_modules/greet/index.js", "rm node_modules/greet/index.js"],
      },
      { ...work, write: { "src/cart.js": "export const cart = true;\n" } },
    ]);
    await label(e, "Add a shop");
    expect(e.github.pulls(REPO)).toHaveLength(0);
    // Without its dependency the first step's gate failed: the agent's deletion was real in its own worktree.
    const entries = await listEntries(setupCacheRoot(e.dataDir));
    expect(entries.map((entry) => entry.repo)).toEqual([REPO]);
    const stored = path.join(entries[0]?.dir ?? "", "files", "node_modules", "greet", "index.js");
    expect(readFileSync(stored, "utf8")).toContain('"hello"');
    // Set-up ran in the sandbox, with none of Lisa's secrets.
    const setupEnv = readFileSync(path.join(entries[0]?.dir ?? "", "files", "node_modules", ".setup-env"), "utf8");
    expect(setupEnv).toMatch(/^HOME=\S*\/lisa-home-\w+$/m);
    for (const secret of [MODEL_KEY, GITHUB_TOKEN, EMULATED_WEBHOOK_SECRET, ...installationTokens(e.github)])
      expect(setupEnv).not.toContain(secret);

    await label(e, "Add a cart");
    expect(agent.calls()).toHaveLength(2);
    expect(e.github.pulls(REPO)).toHaveLength(1);
    expect(await cacheStats(setupCacheRoot(e.dataDir))).toEqual({ hits: 1, misses: 1 });
    expect(readFileSync(stored, "utf8")).toContain('"hello"');
    const metrics = await (await fetch(`${new URL(e.webhookUrl).origin}/metrics`)).text();
    expect(metrics).toContain('lisa_setup_cache_total{outcome="hit"} 1');
    expect(metrics).toContain('lisa_setup_cache_total{outcome="miss"} 1');
    expect(Number(/^lisa_setup_cache_bytes (\d+)$/m.exec(metrics)?.[1])).toBe(entries[0]?.bytes);
  });

  it("never fills the cache from a branch an agent worked on: a later pass that misses runs set-up and stores nothing", async () => {
    const { agent, e } = await start(config([SETUP]), [work, { ...work, write: { "src/shop.js": "export const shop = 2;\n" } }]);
    e.github.addCollaborator(REPO, "mona", "write");
    await label(e, "Add a shop");
    const root = setupCacheRoot(e.dataDir);
    expect(await listEntries(root)).toHaveLength(1);
    // The entry is gone (evicted, or cleared): pass 2, on the branch with the agent's commit, misses.
    await clearSetupCache(root);
    const [pull] = e.github.pulls(REPO);
    await e.github.submitReview(REPO, pull?.number ?? 0, { state: "CHANGES_REQUESTED", body: "Make it 2.", user: "mona" });
    await e.settle();

    expect(agent.calls()).toHaveLength(2);
    expect(await e.github.readFile(REPO, "src/shop.js", pull?.head.ref)).toBe("export const shop = 2;\n");
    // Set-up ran again (its gate passed), and what it made on the agent's branch was not stored.
    expect(await listEntries(root)).toEqual([]);
    expect(await cacheStats(root)).toEqual({ hits: 0, misses: 2 });
  });
});
