// `npm run demo`: Lisa's whole job on one machine, offline, with no GitHub account. A local GitHub
// emulator holds two repositories; Lisa runs against it as it would against github.com; the real
// Claude Code CLI does the agent's work, its model replaced by a scripted local server.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startEmulatedLisa } from "../dev/emulated-lisa.ts";
// @ts-expect-error: a plain ESM module without type declarations.
import { startScriptedModelServer } from "../dev/scripted-model-server.mjs";
import { tempDir } from "../dev/temp-dir.ts";
import { waitFor } from "../dev/wait-for.ts";

const CLAUDE = fileURLToPath(new URL("../agents/node_modules/.bin/claude", import.meta.url));
const started = Date.now();
const say = (text: string) => console.log(`\n[demo +${((Date.now() - started) / 1000).toFixed(1)}s] ${text}`);
/** What a person sees of a comment or body on GitHub: Lisa's HTML markers are not rendered. */
const withoutMarkers = (text: string) => text.replace(/<!--.*?-->\n?/g, "").trim();

const CONFIG = `# Lisa's configuration for the demo
label: lisa
repos:
  - repo: demo/api
    description: HTTP API in Node.js
  - repo: demo/web
    description: Web page that calls the API
gates:
  - test -f HEALTH.md
memory:
  propose: run_pr
`;

/** demo/web's CI (the emulator runs it on every push): a script that blocks the page's rendering fails it. */
const WEB_CI = {
  name: "html-lint",
  failsWhile: { file: "health.html", text: "<script src='health.js'></script>" },
  log: "html-lint: a <script> without defer or async blocks rendering",
};

const write = (file: string, content: string) => ({ name: "Write", input: { file_path: `{{CWD}}/${file}`, content } });
const manifest = (title: string, what: string) =>
  write(".lisa-manifest.json", JSON.stringify({ title, what, testing: "The gate `test -f HEALTH.md` passes." }));

/** What the "model" answers, turn by turn: a plan, then one session per repository. */
const SCRIPT = {
  turns: [
    {
      text: "Planning: the API first, then the page that uses it.",
      tool_use: [
        write(
          ".lisa-plan.json",
          JSON.stringify({
            rationale: "The page needs the endpoint, so the API goes first.",
            steps: [
              { repo: "demo/api", order: 1, scope: "Add GET /health answering {status: 'ok'}, documented in HEALTH.md." },
              { repo: "demo/web", order: 2, scope: "Show the API's /health status on the page, documented in HEALTH.md." },
            ],
          }),
        ),
      ],
    },
    { text: "Plan written." },
    {
      tool_use: [
        write("health.js", "export function health() {\n  return { status: 'ok' };\n}\n"),
        write("HEALTH.md", '# Health\n\n`GET /health` answers `{ "status": "ok" }`.\n'),
      ],
    },
    { tool_use: [manifest("Add a /health endpoint", "Adds `GET /health`, answering `{ status: 'ok' }`.")] },
    { text: "Added the endpoint and its documentation." },
    {
      tool_use: [
        write("health.html", "<p id='health'>checking…</p>\n<script src='health.js'></script>\n"),
        write("HEALTH.md", "# Health\n\nThe page shows the API's `/health` status.\n"),
      ],
    },
    { tool_use: [manifest("Show the API's health on the page", "Adds a status line fed by `GET /health`.")] },
    { text: "The page now shows the API's health." },
    // --- The pull request's own CI (issue 25): demo/web's CI fails on the page's first push, and the
    // session Lisa starts with the CI's report fixes it before review is asked for.
    { tool_use: [write("health.html", "<p id='health'>checking…</p>\n<script src='health.js' defer></script>\n")] },
    { text: "CI said the script blocks rendering: it is deferred now." },
    // --- end of the CI part.
    // Pass 2, after a review asked for a change on the page: the planner keeps the approved API as it is.
    {
      text: "Re-planning pass 2: only the page must change.",
      tool_use: [
        write(
          ".lisa-plan.json",
          JSON.stringify({
            rationale: "The review asks for a change to the page only; the approved API stays as it is.",
            steps: [{ repo: "demo/web", order: 1, scope: "Show the status in bold and refresh it every 30 seconds." }],
          }),
        ),
      ],
    },
    { text: "Plan for pass 2 written." },
    {
      // Steering: the model takes its time here, so @maintainer's redirect reaches the running session (g3).
      delay_ms: 4_000,
      tool_use: [
        write(
          "health.html",
          "<p id='health'><strong>checking…</strong> <small id='checked'>last checked: never</small></p>\n<script src='health.js' defer data-refresh-seconds='30'></script>\n",
        ),
        write(
          ".lisa-manifest.json",
          JSON.stringify({
            title: "Show the API's health on the page",
            what: "Adds a bold status line fed by `GET /health`, refreshed every 30 seconds.",
            testing: "The gate `test -f HEALTH.md` passes.",
            pass_summary: "Made the status bold and refreshed it every 30 seconds, as the review asked.",
            guidance: [
              // The review's opening words ask for nothing of their own: no learning for the memory file.
              { id: "g1", status: "not_applicable", note: "the review's summary; its one thing is g2" },
              { id: "g2", status: "addressed", note: "bold, refreshed every 30 s" },
              { id: "g3", status: "addressed", note: "a 'last checked' time beside the status" },
            ],
            recommendation: "accept",
          }),
        ),
      ],
    },
    { text: "The status is bold and refreshes every 30 seconds." },
    // A second issue, after the first was merged: the page's session finds what the review taught in its prompt.
    {
      text: "Planning the second issue: only the page changes.",
      tool_use: [
        write(
          ".lisa-plan.json",
          JSON.stringify({
            rationale: "The version is shown on the page; the API already serves what it needs.",
            steps: [{ repo: "demo/web", order: 1, scope: "Show the app's version next to the health status." }],
          }),
        ),
      ],
    },
    { text: "Plan written." },
    {
      tool_use: [
        write(
          "version.html",
          "<p id='version'><strong>v1</strong></p>\n<script src='version.js' data-refresh-seconds='30'></script>\n",
        ),
        manifest("Show the version on the page", "Adds a bold version line, refreshed every 30 seconds as the memory asks."),
      ],
    },
    { text: "The version is shown, bold and refreshed every 30 seconds." },
  ],
};

async function main(): Promise<void> {
  say("Starting a scripted model server, the GitHub emulator and Lisa…");
  const model = await startScriptedModelServer({ quiet: true, script: SCRIPT });
  const env = await startEmulatedLisa({
    claudeBinary: CLAUDE,
    // The live check run is written at most once a second here (30 s deployed), so the demo can watch it.
    liveCheckIntervalMs: 1_000,
    // LISA_SANDBOX=off, the way out `npm start` honours too: the agent runs unconfined.
    ...(process.env.LISA_SANDBOX === "off" ? { sandbox: { mode: "off" as const, privateModelApi: true } } : {}),
    agentEnvSource: {
      PATH: process.env.PATH,
      HOME: tempDir("demo-claude-home"),
      ANTHROPIC_BASE_URL: model.url,
      // The scripted server is on 127.0.0.1: the sandbox's proxy may reach exactly its address and port.
      LISA_ALLOW_PRIVATE_MODEL_API: "true",
      ANTHROPIC_API_KEY: "sk-ant-demo-key-for-the-scripted-server",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      CLAUDE_CODE_MAX_RETRIES: "0",
      // Claude Code refuses to skip permission prompts as root outside a declared sandbox.
      ...(userInfo().uid === 0 ? { IS_SANDBOX: "1" } : {}),
    },
  });
  const { github } = env;
  try {
    await github.createRepo("demo/api", { files: { "README.md": "# demo/api\n\nThe HTTP API.\n" }, config: CONFIG });
    await github.createRepo("demo/web", { files: { "README.md": "# demo/web\n\nThe web page.\n" }, ci: [WEB_CI] });
    github.addCollaborator("demo/api", "maintainer", "maintain");
    github.addCollaborator("demo/web", "maintainer", "maintain");
    const issue = await github.createIssue("demo/api", {
      title: "Add a health check and show it on the page",
      body: "We need `GET /health` in the API, and the web page should show it.",
      user: "maintainer",
    });
    say(`Issue demo/api#${issue.number} opened; @maintainer labels it \`lisa\`.`);

    let shown = "";
    const show = () => {
      const comment = github.comments("demo/api", issue.number).find((c) => c.body.includes("lisa:tracking"));
      const body = comment && withoutMarkers(comment.body);
      if (body && body !== shown) {
        shown = body;
        say(`Tracking comment on demo/api#${issue.number}:\n${body.replace(/^/gm, "    ")}`);
      }
    };
    const ticker = setInterval(show, 300);
    await github.labelIssue("demo/api", issue.number, "lisa", "maintainer");
    await env.settle();
    clearInterval(ticker);
    show();

    const pulls = ["demo/api", "demo/web"].flatMap((repo) => github.pulls(repo).map((pull) => ({ repo, pull })));
    const [api, web] = pulls;
    if (!api || !web || pulls.length !== 2) {
      throw new Error(
        `Lisa opened ${pulls.length} pull request(s), not two: the tracking comment above says why. ` +
          "`npx lisa doctor` checks this machine (the sandbox, the agent CLI).",
      );
    }

    // --- CI part: what demo/web's CI said on each head Lisa pushed, and only what it said.
    const conclusions = github
      .checkRuns("demo/web")
      .filter((run) => run.name === WEB_CI.name)
      .map((run) => run.conclusion);
    say(`demo/web's CI (${WEB_CI.name}) on each head Lisa pushed in pass 1: ${conclusions.join(" → ") || "none"}`);
    if (conclusions.at(-1) === "success" && conclusions.slice(0, -1).includes("failure"))
      console.log("    Lisa gave the failing check's report to a new agent session, which fixed it before review was asked for.");
    // --- end of the CI part.
    say("Pass 1 is ready for review. Two linked pull requests:");
    for (const { repo, pull } of pulls) {
      console.log(`    ${repo}#${pull.number} "${pull.title}" — branch ${pull.head.ref}, its commits:`);
      // The emulator's repositories go with the demo's temporary folder: the commits are shown here.
      const log = execFileSync("git", ["log", "--format=%h %s", "--stat=72", `${pull.base.ref}..${pull.head.ref}`], {
        cwd: github.gitDir(repo),
        encoding: "utf8",
      });
      console.log(log.trimEnd().replace(/^/gm, "      "));
    }
    console.log(`\n    The first pull request's body, links to its sibling included:\n`);
    console.log(withoutMarkers(api.pull.body ?? "").replace(/^/gm, "      "));

    say(
      `@maintainer approves demo/api#${api.pull.number}, and requests a change on demo/web#${web.pull.number} with an inline comment.`,
    );
    const ticker2 = setInterval(show, 300);
    await github.submitReview("demo/api", api.pull.number, {
      state: "APPROVED",
      body: "The endpoint looks right.",
      user: "maintainer",
    });
    await github.submitReview("demo/web", web.pull.number, {
      state: "CHANGES_REQUESTED",
      body: "Almost: one thing on the page.",
      user: "maintainer",
      comments: [{ path: "health.html", line: 1, body: "Make the status bold, and refresh it every 30 seconds." }],
    });
    // ── Steering pass 2 mid-session ──
    const runId = (await env.lisa.store.runs.inState("review", "queued", "running"))[0]?.id ?? 0;
    await waitFor(
      "pass 2's agent session",
      async () => (await env.lisa.store.sessions.runningIn(runId)).some((s) => s.purpose === "revise"),
      60_000,
    );
    say(`Pass 2's agent is at work; @maintainer adds a redirect on demo/web#${web.pull.number} while it runs.`);
    await github.commentOnIssue("demo/web", web.pull.number, "/lisa redirect Also show when it was last checked.", "maintainer");
    await waitFor("Lisa's answer", () =>
      github.comments("demo/web", web.pull.number).find((c) => c.body.includes("while it runs")),
    ).then((answer) => say(`Lisa answers on demo/web#${web.pull.number}: ${withoutMarkers(answer.body)}`));
    const live = await waitFor("the live check run", () =>
      github
        .checkRuns("demo/web")
        .find(
          (run) => run.name === "Lisa" && run.status === "in_progress" && run.output.summary?.includes("**Provider** `claude`"),
        ),
    );
    say(
      `@maintainer watches the session in demo/web#${web.pull.number}'s "Lisa" check run (${live.output.title}):\n${(live.output.summary ?? "").replace(/^/gm, "    ")}`,
    );
    // ── end of steering ──
    await env.settle();
    show();
    const pass2 = github
      .comments("demo/web", web.pull.number)
      .filter((c) => c.body.includes("<!-- lisa:pass "))
      .at(-1);
    say(`Pass 2's review package on demo/web#${web.pull.number}:\n${withoutMarkers(pass2?.body ?? "").replace(/^/gm, "    ")}`);

    say(`@maintainer approves demo/web#${web.pull.number} at its new head.`);
    await github.submitReview("demo/web", web.pull.number, { state: "APPROVED", body: "Thanks!", user: "maintainer" });
    await env.settle();
    clearInterval(ticker2);
    show();
    const report = github.comments("demo/api", issue.number).find((c) => c.body.includes("<!-- lisa:report "));
    if (!report) throw new Error("no final report: the run was not accepted");
    say(`Accepted. The final report on demo/api#${issue.number}:\n${withoutMarkers(report.body).replace(/^/gm, "    ")}`);
    say("@maintainer merges both pull requests. demo/web's carries what the review taught Lisa, in its memory file:");
    for (const { repo, pull } of pulls) await github.mergePull(repo, pull.number, { user: "maintainer" });
    await env.settle();
    console.log(((await github.readFile("demo/web", ".github/lisa/memory.md")) ?? "(none)").replace(/^/gm, "    "));

    const second = await github.createIssue("demo/api", {
      title: "Show the app's version on the page",
      body: "The page should show which version is running.",
      user: "maintainer",
    });
    say(`Issue demo/api#${second.number} opened and labeled; Lisa works on it with what it learned.`);
    await github.labelIssue("demo/api", second.number, "lisa", "maintainer");
    await env.settle();
    const prompt = model
      .mainRequests()
      .map((request: unknown) => JSON.stringify(request))
      .find((request: string) => request.includes(`issue #${second.number}`) && request.includes("What Lisa learned"));
    const learned = prompt ? (JSON.parse(`"${/- Make the status bold[^"]*?(?=\\n)/.exec(prompt)?.[0] ?? ""}"`) as string) : "";
    if (!learned) throw new Error("the second issue's prompt did not carry the memory");
    say(`The learning carried into demo/api#${second.number}'s session on demo/web, in its prompt:\n    ${learned}`);

    console.log(`\nEverything above ran locally: the GitHub emulator, Lisa and the real Claude Code CLI (model scripted).`);
    console.log('To run Lisa against GitHub itself, see "Your first real pull request" in the README.');
  } finally {
    await env.stop();
    await model.close();
  }
}

// Everything the demo makes (the emulator's repositories, Lisa's data, the agents' homes) goes in one
// temporary folder of its own, removed at the end, however the demo ends.
const scratch = mkdtempSync(path.join(tmpdir(), "lisa-demo-"));
process.env.TMPDIR = scratch;
try {
  await main();
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
}
