import { randomUUID } from "node:crypto";
import { Probot } from "probot";
import { createLisa } from "../app.ts";
import { EnvError, settingsFromEnv } from "../config/env-schema.ts";
import { labelOf } from "../config/parse-config.ts";
import { createGitHubPort } from "../github/create-github-port.ts";
import { LisaOctokit } from "../github/lisa-octokit.ts";
import { createWritePacer, paceWrites } from "../github/write-pacer.ts";
import type { RunRow } from "../store/store.ts";
import { apiBaseUrl, quietLog } from "./github-api.ts";

const USAGE = `usage: lisa run owner/repo#N

Runs Lisa on one issue from this terminal, without the App or a webhook: it plans (when the
repository's config lists several), runs the agent in a sandbox, pushes and opens the pull
requests, then stops at the review gate. It acts with your token: GITHUB_TOKEN or GH_TOKEN
(for example \`GITHUB_TOKEN=$(gh auth token)\`), which needs write access to each repository.
The rest of the environment is Lisa's (LISA_DATA_DIR, LISA_SANDBOX, GHE_HOST, the agent's keys);
LOG_LEVEL=warn shows Lisa's warnings too (check runs, for one, are refused to a personal token).
`;

/**
 * `lisa run owner/repo#N`: one issue end to end with a person's token, for trying Lisa on a real
 * repository before installing the App. The run is Lisa's own (same store, sandbox, commands and
 * comments), started as a label would start it; the review loop that follows needs the App's
 * webhooks, so the command ends at the gate and says where the pull requests are.
 */
export async function runIssue(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const target = /^([\w.-]+)\/([\w.-]+)#(\d+)$/.exec(args[0] ?? "");
  if (!target || args.includes("--help")) {
    process.stderr.write(USAGE);
    return args.includes("--help") ? 0 : 2;
  }
  const [, owner = "", repo = "", number = ""] = target;
  const token = env.GITHUB_TOKEN || env.GH_TOKEN;
  if (!token) {
    process.stderr.write(`lisa run: set GITHUB_TOKEN (or GH_TOKEN) to a token with write access to ${owner}/${repo}.\n`);
    return 2;
  }
  let settings: ReturnType<typeof settingsFromEnv>;
  try {
    // A terminal run keeps its store in the data directory, whatever the deployment shares.
    settings = settingsFromEnv({ ...env, DATABASE_URL: undefined, LISA_ROLE: undefined });
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    process.stderr.write(`lisa run: fix these environment variables:\n${error.message}\n`);
    return 2;
  }
  const baseUrl = apiBaseUrl(env);
  const octokit = new LisaOctokit({ auth: { token }, baseUrl, log: quietLog });
  const say = (line: string) => process.stdout.write(`${line}\n`);

  let me: string;
  let issue: { title: string; body: string; defaultBranch: string };
  try {
    me = (await octokit.rest.users.getAuthenticated()).data.login;
    const { data } = await octokit.rest.issues.get({ owner, repo, issue_number: Number(number) });
    const { data: repository } = await octokit.rest.repos.get({ owner, repo });
    if (data.pull_request) throw new Error(`#${number} is a pull request; Lisa works on issues`);
    issue = { title: data.title, body: data.body ?? "", defaultBranch: repository.default_branch };
  } catch (error) {
    process.stderr.write(`lisa run: ${owner}/${repo}#${number}: ${(error as Error).message}\n`);
    return 1;
  }
  const port = createGitHubPort(octokit as never, async () => token, { self: me });
  // Errors only, unless LOG_LEVEL says otherwise: the terminal shows the run's progress, and a
  // personal token's expected refusals (check runs are for Apps) would bury it.
  const probot = new Probot({ githubToken: token, baseUrl, logLevel: (env.LOG_LEVEL as "error" | undefined) ?? "error" });
  const lisa = createLisa(probot, { ...settings, concurrency: 1, githubPort: async () => port });
  // LisaOctokit leaves pacing to the store; a personal token's writes take slots under installation 0.
  paceWrites(octokit, createWritePacer({ slots: lisa.store.writeSlots, installationId: 0 }));
  await lisa.start();

  say(`Lisa on ${owner}/${repo}#${number} “${issue.title}”, as @${me}; data in ${settings.dataDir}`);
  const started = Date.now();
  const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`.padStart(6);
  const seen = { events: 0, sessions: new Set<number>(), prs: new Set<string>() };
  const report = async () => {
    const run = await lisa.store.runs.latestFor(owner, repo, Number(number));
    if (!run) return;
    for (const event of (await lisa.store.events.of(run.id)).slice(seen.events)) {
      seen.events += 1;
      say(`${seconds()}  ${event.to_state ? `run ${event.to_state}` : event.kind}${event.detail ? `: ${event.detail}` : ""}`);
    }
    for (const step of await lisa.store.steps.of(run.id)) {
      for (const session of await lisa.store.sessions.of(step.id)) {
        if (seen.sessions.has(session.id)) continue;
        seen.sessions.add(session.id);
        say(`${seconds()}  ${session.provider} session (${session.purpose}) in ${step.owner}/${step.repo}`);
      }
      if (step.pr_url && !seen.prs.has(step.pr_url)) {
        seen.prs.add(step.pr_url);
        say(`${seconds()}  pull request ${step.pr_url}`);
      }
    }
  };
  // One report at a time: a slow one must not let the next print the same events again.
  let reported = Promise.resolve();
  const reportNext = () => (reported = reported.then(report).catch(() => {}));
  const ticker = setInterval(reportNext, 500);
  let run: RunRow | undefined;
  try {
    const config = await port.readConfig({ owner, repo });
    const delivery = `lisa-run-${randomUUID()}`;
    const command = {
      installationId: 0,
      owner,
      repo,
      defaultBranch: issue.defaultBranch,
      issue: { number: Number(number), title: issue.title, body: issue.body },
      label: labelOf(config),
      sender: me,
    };
    const id = await lisa.store.commands.add(delivery, "start_run", command);
    if (id !== undefined) lisa.worker.commandStored({ id, kind: "start_run", payload: command });
    await lisa.idle();
    await reportNext();
    run = await lisa.store.runs.latestFor(owner, repo, Number(number));
  } finally {
    clearInterval(ticker);
    await lisa.stop();
  }
  if (!run || run.created_at < started) {
    say("Lisa did not start a run; her answer is on the issue.");
    return 1;
  }
  // Lisa is idle, so the run rests until a person acts: at the gate, or stopped short of it.
  if (run.state === "queued" || run.state === "running") return 1;
  const atGate = run.state === "review" || run.state === "plan_review";
  say(
    atGate
      ? `Waiting for review. Approving and \`/lisa redirect\` need the App installed (README, “Your first real pull request”).`
      : `The run is ${run.state}${run.error ? `: ${run.error}` : ""}. The tracking comment on the issue says more.`,
  );
  return atGate ? 0 : 1;
}
