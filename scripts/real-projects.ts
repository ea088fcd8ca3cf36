// `npm run real-projects`: published npm packages that ship their own tests, through Lisa's whole
// loop (issue 41). Each is fetched at a pinned version with `npm pack`, made into a repository in the
// GitHub emulator with `setup: [npm install]` and its own test command as the gate, and worked on by
// the real Claude Code CLI against the scripted model server. It shows, per project:
//   - an agent that breaks a test is sent back by the project's real gate, and its fix opens the PR;
//   - the project's own suite passes at the PR's head;
//   - set-up ran once: pass 2 (after a change request) and a second issue start from the cache;
//   - a file the first agent deleted in node_modules is there again in the next session's copy;
// and prints the time of set-up, of a cache restore, of the gates and of Lisa's own work.
// It needs the npm registry (the one network CI has): the sandbox reaches it through Lisa's egress
// proxy with LISA_EGRESS_ALLOW, as an operator's internal registry would be. `npm test` stays offline.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type EmulatedLisa, sandboxFor, startEmulatedLisa } from "../dev/emulated-lisa.ts";
// @ts-expect-error: a plain ESM module without type declarations, also runnable on its own.
import { startScriptedModelServer } from "../dev/scripted-model-server.mjs";
import { tempDir } from "../dev/temp-dir.ts";
import { parseOperatorHosts } from "../src/sandbox/egress-rules.ts";
import { cacheStats, listEntries, setupCacheRoot } from "../src/workspace/setup-cache.ts";

const CLAUDE = fileURLToPath(new URL("../agents/node_modules/.bin/claude", import.meta.url));

interface ModelServer {
  url: string;
  close(): Promise<void>;
}

/** The environment agents' environments are picked from: Claude Code offline against the scripted server. */
function agentEnvSource(serverUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: tempDir("real-projects-claude-home"),
    ANTHROPIC_BASE_URL: serverUrl,
    // The scripted server is on 127.0.0.1: the sandbox's proxy may reach exactly its address and port.
    LISA_ALLOW_PRIVATE_MODEL_API: "true",
    ANTHROPIC_API_KEY: "sk-ant-real-projects-key-for-the-scripted-server",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
    // npm in the sandbox trusts what this machine trusts.
    ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
    // Claude Code refuses to skip permission prompts as root outside a declared sandbox.
    ...(userInfo().uid === 0 ? { IS_SANDBOX: "1" } : {}),
  };
}

interface Project {
  /** `name@version`, as `npm pack` takes it. */
  spec: string;
  /** The project's own test command: the gate. */
  gate: string;
  /** Makes the project's test runner run `test/words.js` (a runner that globs test/ needs nothing). */
  registerTest: string;
}

const PROJECTS: Project[] = [
  { spec: "is-regex@1.2.1", gate: "npm run tests-only", registerTest: `echo "require('./words');" >> test/index.js` },
  // is-string@1.1.1 cannot be set up here: it asks for typescript@next, which this registry does not have.
  { spec: "is-date-object@1.1.0", gate: "npm run tests-only", registerTest: "true" },
];

const OWNER = "acme";
const REVIEWER = "mona";
/** A file of a dependency the first agent deletes from its copy of node_modules. */
const DELETED = "node_modules/tape/readme.markdown";

const registry = (
  execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim() || "https://registry.npmjs.org/"
).replace(/\/?$/, "/");
const registryUrl = new URL(registry);
const registryHost = `${registryUrl.hostname}:${registryUrl.port || (registryUrl.protocol === "https:" ? 443 : 80)}`;

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Stops the suite, saying why. */
function fail(message: string): never {
  process.stderr.write(`real-projects: ${message}\n`);
  process.exit(1);
}

/** The registry answers, or the suite says plainly that it cannot run. */
function checkRegistry(): void {
  // Its errors printed even under `npm run --silent` (the check's), whose log level the child inherits.
  const probe = spawnSync("npm", ["view", PROJECTS[0]?.spec ?? "is-regex", "version", "--loglevel=error"], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (probe.status !== 0) {
    const ended = probe.error?.message ?? `npm view ended with ${probe.status ?? probe.signal} and printed nothing`;
    const lines = (probe.stderr || ended).trim().split("\n");
    // npm's code and the request that failed say why; its advice and log path do not.
    const telling = lines.filter((line) => /\b(code|request to|reason)\b/.test(line));
    const why = (telling.length ? telling : lines.slice(-2)).join(" ").replace(/\s+/g, " ");
    fail(
      `the npm registry (${registry}) is unreachable from this machine, and this suite installs real projects' dependencies from it: ${why}`,
    );
  }
}

/** The package's published files, unpacked: what its repository holds, tests included. */
function fetchProject(spec: string): Record<string, string> {
  const dir = tempDir("real-project");
  const tarball = execFileSync("npm", ["pack", spec, "--silent"], { cwd: dir, encoding: "utf8" }).trim().split("\n").at(-1) ?? "";
  execFileSync("tar", ["xzf", tarball], { cwd: dir });
  const root = path.join(dir, "package");
  const files: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else files[path.relative(root, full)] = readFileSync(full, "utf8");
    }
  };
  walk(root);
  rmSync(dir, { recursive: true, force: true });
  return files;
}

const bash = (command: string) => ({ name: "Bash", input: { command, description: "Work on the project" } });
const manifest = (title: string, what: string) =>
  bash(`cat > .lisa-manifest.json <<'EOF'\n${JSON.stringify({ title, what, testing: "The project's own test suite." })}\nEOF`);

/** One tool call per turn: the CLI runs them one after the other, as written. */
const turns = (...calls: object[]) => calls.map((call) => ({ tool_use: [call] }));

const WORDS_TEST = [
  "'use strict';",
  "var test = require('tape');",
  "var countWords = require('../words');",
  "test('countWords', function (t) {",
  "  t.equal(countWords('a  b\\tc'), 3, 'counts words separated by any whitespace');",
  "  t.equal(countWords('   '), 0, 'counts no words in blanks');",
  "  t.end();",
  "});",
].join("\n");
const words = (body: string) => `'use strict';\nmodule.exports = function countWords(text) {\n  ${body}\n};`;

/** The scripted model's turns, session after session, for one project. */
function script(project: Project): object {
  return {
    turns: [
      // Issue 1, session 1: a function and its test, the function wrong; and a dependency file deleted.
      ...turns(
        bash(`cat > words.js <<'EOF'\n${words("return text.split(' ').length;")}\nEOF`),
        bash(`cat > test/words.js <<'EOF'\n${WORDS_TEST}\nEOF\n${project.registerTest}`),
        bash(`rm ${DELETED}`),
        manifest("Add countWords", "Adds countWords and its test."),
      ),
      { text: "Added countWords and its test." },
      // Session 2: the real gate failed; the fix.
      ...turns(
        bash(
          `cat > words.js <<'EOF'\n${words("var trimmed = text.trim();\n  return trimmed ? trimmed.split(/\\s+/).length : 0;")}\nEOF`,
        ),
        manifest("Add countWords", "Adds countWords and its test; splits on any whitespace."),
      ),
      { text: "Fixed countWords." },
      // Pass 2, after a change request: documents it, and notes whether node_modules has the deleted file.
      ...turns(
        bash(
          `printf '\\n## countWords\\n\\nCounts the words of a string.\\n' >> README.md; (test -f ${DELETED} && echo present || echo missing) > node-modules-check.txt`,
        ),
        manifest("Add countWords", "Documents countWords in the README."),
      ),
      { text: "Documented countWords." },
      // Issue 2: another function and its test, from the cache.
      ...turns(
        bash(
          `printf "'use strict';\\nmodule.exports = function firstWord(text) { return text.trim().split(/\\\\s+/)[0] || ''; };\\n" > first-word.js; (test -f ${DELETED} && echo present || echo missing) > node-modules-check.txt`,
        ),
        bash(
          `printf "'use strict';\\nvar test = require('tape');\\nvar firstWord = require('../first-word');\\ntest('firstWord', function (t) { t.equal(firstWord('  hello world'), 'hello'); t.end(); });\\n" > test/first-word.js; ${project.registerTest.replace("words", "first-word")}`,
        ),
        manifest("Add firstWord", "Adds firstWord and its test."),
      ),
      { text: "Added firstWord and its test." },
    ],
  };
}

/** Sums of Lisa's histograms (seconds) and counters, from /metrics. */
async function metrics(env: EmulatedLisa) {
  const text = await (await fetch(`${new URL(env.webhookUrl).origin}/metrics`)).text();
  const value = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);
  return {
    setup: value(/^lisa_setup_duration_seconds_sum (\S+)$/gm),
    restore: value(/^lisa_setup_restore_duration_seconds_sum (\S+)$/gm),
    restores: value(/^lisa_setup_restore_duration_seconds_count (\S+)$/gm),
    store: value(/^lisa_setup_store_duration_seconds_sum (\S+)$/gm),
    gates: value(/^lisa_gate_duration_seconds_sum\{[^}]*\} (\S+)$/gm),
    gateRuns: value(/^lisa_gate_duration_seconds_count\{[^}]*\} (\S+)$/gm),
    sessions: value(/^lisa_session_duration_seconds_sum\{[^}]*\} (\S+)$/gm),
  };
}

/** The tracking comments of the repository's issues, shown when a check fails. */
let explain: () => string = () => "";

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`real-projects: ${what} did not hold. The issues' tracking comments:\n${explain()}`);
  say(`  ok  ${what}`);
}

const gitIn = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" });

async function runProject(project: Project): Promise<void> {
  const name = project.spec.split("@")[0] ?? project.spec;
  const repo = `${OWNER}/${name}`;
  say(`\n${project.spec}: its own tests (\`${project.gate}\`) as the gate, \`npm install\` as set-up`);
  const files = fetchProject(project.spec);
  const server = (await startScriptedModelServer({ quiet: true, script: script(project) })) as ModelServer;
  const operatorHosts = parseOperatorHosts(registryHost);
  if ("bad" in operatorHosts) fail(`cannot allow ${registryHost}`);
  const source = agentEnvSource(server.url);
  // The operator's environment allows the registry: the sandbox reaches it although it resolves to a reserved address here.
  const env = await startEmulatedLisa({
    claudeBinary: CLAUDE,
    agentEnvSource: source,
    sandbox: { ...sandboxFor(source), operatorHosts: operatorHosts.rules },
  });
  try {
    const config = [
      "label: lisa",
      "setup:",
      "  - npm install --no-audit --no-fund",
      "gates:",
      `  - ${project.gate}`,
      "limits:",
      "  max_iterations: 3",
      "  setup_timeout: 10m",
    ].join("\n");
    await env.github.createRepo(repo, {
      files: { ...files, ".gitignore": "node_modules/\npackage-lock.json\n.nyc_output/\ncoverage/\n" },
      config: `${config}\n`,
    });
    env.github.addCollaborator(repo, REVIEWER, "write");
    explain = () =>
      env.github
        .issues(repo)
        .flatMap((issue) => env.github.comments(repo, issue.number).filter((c) => c.body.includes("lisa:tracking")))
        .map((c) => c.body)
        .join("\n\n");
    let wall = 0;
    const timed = async (work: () => Promise<unknown>) => {
      const started = Date.now();
      await work();
      await env.settle();
      wall += Date.now() - started;
    };

    // Issue 1, pass 1.
    const first = await env.github.createIssue(repo, {
      title: "Add countWords",
      body: "A function that counts words.",
      user: OWNER,
    });
    await timed(() => env.github.labelIssue(repo, first.number, "lisa", OWNER));
    const [pull] = env.github.pulls(repo);
    check(pull !== undefined, "the pull request is open after pass 1");
    const [run] = await env.lisa.store.runs.inState("review");
    const [step] = await env.lisa.store.steps.of(run?.id ?? 0);
    const sessions = async () => (await env.lisa.store.sessions.of(step?.id ?? 0)).map((s) => s.purpose);
    check(
      JSON.stringify(await sessions()) === JSON.stringify(["implement", "fix_gates"]),
      "the agent that broke the new test was sent back by the project's real gate, and its fix passed",
    );
    check((await cacheStats(setupCacheRoot(env.dataDir))).misses === 1, "set-up ran once, and its node_modules was stored");
    const head = pull?.head.ref ?? "";
    const clone = tempDir("real-project-head");
    gitIn(clone, "clone", "--quiet", "--branch", head, env.github.gitDir(repo), ".");
    const [entry] = await listEntries(setupCacheRoot(env.dataDir));
    execFileSync("cp", ["-a", path.join(entry?.dir ?? "", "files", "node_modules"), path.join(clone, "node_modules")]);
    const suite = spawnSync("sh", ["-c", project.gate], { cwd: clone, encoding: "utf8", timeout: 300_000 });
    check(
      suite.status === 0 && /# pass +\d+/.test(suite.stdout) && suite.stdout.includes("countWords"),
      "the project's own suite passes at the pull request's head, the new test included",
    );
    rmSync(clone, { recursive: true, force: true });
    check(
      existsSync(path.join(entry?.dir ?? "", "files", DELETED)),
      `the cache still holds ${DELETED}, which the first agent deleted in its copy`,
    );

    // Pass 2, after a change request.
    await timed(() =>
      env.github.submitReview(repo, pull?.number ?? 0, {
        state: "CHANGES_REQUESTED",
        body: "Please document countWords in the README.",
        user: REVIEWER,
      }),
    );
    const checked = await env.github.readFile(repo, "node-modules-check.txt", head);
    check(
      checked?.trim() === "present",
      "pass 2 started from the cache, and its copy of node_modules has the file pass 1's agent deleted",
    );
    check(
      (await env.github.readFile(repo, "README.md", head))?.includes("## countWords") === true,
      "pass 2's change is on the pull request",
    );

    // Issue 2, on the same repository.
    const second = await env.github.createIssue(repo, {
      title: "Add firstWord",
      body: "A function that gives the first word.",
      user: OWNER,
    });
    await timed(() => env.github.labelIssue(repo, second.number, "lisa", OWNER));
    const pulls = env.github.pulls(repo);
    check(pulls.length === 2, "the second issue's pull request is open");
    const stats = await cacheStats(setupCacheRoot(env.dataDir));
    check(
      stats.hits === 2 && stats.misses === 1,
      `pass 2 and the second issue restored set-up from the cache (${stats.hits} hits, ${stats.misses} miss)`,
    );

    const m = await metrics(env);
    const lisaOwn = wall / 1000 - m.sessions - m.setup - m.restore - m.gates - m.store;
    say(
      `  ${project.spec}: set-up ${m.setup.toFixed(1)} s (once) · storing it ${m.store.toFixed(1)} s · cache restore ${(m.restore / Math.max(1, m.restores)).toFixed(2)} s (each of ${m.restores}) · gate ${(m.gates / Math.max(1, m.gateRuns)).toFixed(1)} s (each of ${m.gateRuns}) · agent sessions ${m.sessions.toFixed(1)} s · Lisa's own ${lisaOwn.toFixed(1)} s of ${(wall / 1000).toFixed(1)} s`,
    );
  } finally {
    await env.stop();
    await server.close();
  }
}

const started = Date.now();
checkRegistry();
say(`real-projects: dependencies from ${registry}, reached from the sandbox through LISA_EGRESS_ALLOW=${registryHost}`);
// Everything the suite makes (packed projects, the emulator's repositories, Lisa's data and cache, the
// agents' homes) goes in one temporary folder of its own, removed however the suite ends.
const scratch = mkdtempSync(path.join(tmpdir(), "lisa-real-projects-"));
process.env.TMPDIR = scratch;
try {
  // REAL_PROJECTS_ONLY=is-date-object runs one project.
  const only = process.env.REAL_PROJECTS_ONLY;
  for (const project of PROJECTS) if (!only || project.spec.startsWith(`${only}@`)) await runProject(project);
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
}
say(`\nreal-projects: ${PROJECTS.length} projects through the loop in ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);
