import { describe, expect, it } from "vitest";
import { waitFor } from "../../dev/wait-for.ts";
import { type ModelServer, OPENCODE_MODEL, type RealCliLisa, useModelServer, useRealCliLisa } from "../support/agent-clis.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { BRANCH, HELLO_WORLD, ISSUE, OWNER } from "../support/hello-world.ts";
import { trackingBody } from "../support/tracking-body.ts";

const lisa = useRealCliLisa();
const model = useModelServer();

const GUIDANCE = "Also sign the README with Lisa, please";
const MANIFEST = {
  title: "Fix the README heading",
  what: "Spells World correctly.",
  testing: "Checked by eye.",
  guidance: [{ id: "g1", status: "addressed", note: "Signed the README." }],
};
const GATES = "gates:\n  - grep -q 'Hello World' README.md\n";

/** The texts the model was sent, request by request (main requests: the agent loop's). */
const sent = (server: ModelServer) =>
  server.requests.filter((r) => r.kind === "main").map((r) => JSON.stringify(r.body?.messages ?? r.body?.contents ?? ""));

/** Labels issue #1 and returns once the model has been asked for the first time: the agent session runs. */
async function labelAndWaitForSession(env: RealCliLisa, server: ModelServer): Promise<void> {
  await env.github.labelIssue(HELLO_WORLD, ISSUE, "bug", OWNER);
  await waitFor("the agent session to ask the model", () => sent(server).length > 0, 60_000);
}

/** The current pass's guidance, each item's text and what the agent said it did with it. */
async function passGuidance(env: RealCliLisa, runId: number) {
  const pass = await env.lisa.store.passes.current(runId);
  return (await env.lisa.store.guidance.forPass(pass?.id ?? 0)).map((g) => [g.body, g.status]);
}

/** The pull request's body and its pass package, together: where the reviewer reads what the pass did. */
function onThePullRequest(env: RealCliLisa): string {
  const [pull] = env.github.pulls(HELLO_WORLD);
  const pack = env.github.comments(HELLO_WORLD, pull?.number ?? 0).find((c) => c.body.includes("<!-- lisa:pass "));
  return `${pull?.body}\n${pack?.body ?? ""}`;
}

const comments = (env: RealCliLisa) => env.github.comments(HELLO_WORLD, ISSUE).map((c) => c.body);

describe("steering a running pass", () => {
  it("Claude Code: a writer's redirect mid-session reaches the running session as a further message, and the same pass's package accounts for it", async () => {
    const server = await model.start({
      turns: [
        // A long command: the redirect is written and handled while it runs (the model's answers are seen once sent).
        { tool_use: [{ name: "Bash", input: { command: "sleep 8", description: "Take a while" } }] },
        { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n\nSigned, Lisa\n" } }] },
        { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/.lisa-manifest.json", content: JSON.stringify(MANIFEST) } }] },
        { text: "Fixed the heading and signed the README." },
      ],
    });
    const env = await lisa.start(server.url, `label: bug\n${GATES}`);
    await labelAndWaitForSession(env, server);

    await env.github.commentOnIssue(HELLO_WORLD, ISSUE, `/lisa redirect ${GUIDANCE}`, OWNER);
    await env.settle();

    // The model was sent the guidance, fenced as data, in a later request of the same session.
    const withGuidance = sent(server).filter((text) => text.includes(GUIDANCE));
    expect(withGuidance.length).toBeGreaterThan(0);
    expect(withGuidance[0]).toContain("New guidance from the reviewers");
    expect(withGuidance[0]).toContain("guidance g1, written on GitHub");
    expect(
      comments(env).some((body) => body.includes("Taken into pass 1 while it runs: the running claude session reads it now.")),
    ).toBe(true);
    const [run] = await env.lisa.store.runs.inState("review");
    expect(run?.current_pass).toBe(1);
    const [step] = (await env.lisa.store.steps.of(run?.id ?? 0)).filter((s) => s.position > 0);
    // One session took it: nothing restarted, and no pass 2 waits with it.
    expect((await env.lisa.store.sessions.of(step?.id ?? 0)).map((s) => [s.purpose, s.state])).toEqual([
      ["implement", "succeeded"],
    ]);
    expect(await env.lisa.store.guidance.queued(run?.id ?? 0)).toEqual([]);
    expect(await passGuidance(env, run?.id ?? 0)).toEqual([[GUIDANCE, "addressed"]]);
    expect(onThePullRequest(env)).toContain(GUIDANCE);
  });

  it("OpenCode: a writer's redirect mid-session stops the session after its tool call, and a resumed session of the same pass gets it in its prompt", async () => {
    const server = await model.start({
      turns: [
        {
          // The tool call ends the only turn that works: whichever request comes after it, the work is done.
          tool_use: [
            {
              name: "bash",
              input: {
                // Slow, so the redirect comes while it runs (the model's answers are seen once sent).
                command: `sleep 8 && printf '# Hello World\\n' > README.md && printf '%s' '${JSON.stringify(MANIFEST)}' > .lisa-manifest.json`,
                description: "Fix the heading",
              },
            },
          ],
        },
      ],
      fallback: { text: "Done." },
    });
    const env = await lisa.start(server.url, `label: bug\nproviders:\n  - opencode: { model: ${OPENCODE_MODEL} }\n${GATES}`);
    await labelAndWaitForSession(env, server);

    await env.github.commentOnIssue(HELLO_WORLD, ISSUE, `/lisa redirect ${GUIDANCE}`, OWNER);
    await env.settle();

    expect(
      comments(env).some((body) =>
        body.includes(
          "Taken into pass 1 while it runs: the running opencode session stops at its next safe point and a new session of the pass resumes the work with it.",
        ),
      ),
    ).toBe(true);
    const [run] = await env.lisa.store.runs.inState("review");
    expect(run?.current_pass).toBe(1);
    const [step] = (await env.lisa.store.steps.of(run?.id ?? 0)).filter((s) => s.position > 0);
    const sessions = await env.lisa.store.sessions.of(step?.id ?? 0);
    expect(sessions.map((s) => [s.purpose, s.state, s.message])).toEqual([
      ["implement", "interrupted", "stopped to take in guidance written meanwhile"],
      ["resume", "succeeded", null],
    ]);
    // The tool call finished before the stop (its result never reached the model): its work stood.
    expect(server.toolResults()).toEqual([]);
    expect(gitIn(env.github.gitDir(HELLO_WORLD), "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    const resumed = sent(server).filter((text) => text.includes(GUIDANCE));
    expect(resumed.length).toBeGreaterThan(0);
    expect(resumed[0]).toContain("stopped to give you guidance the reviewers wrote while it worked");
    expect(resumed[0]).toContain("guidance g1, written on GitHub");
    expect(await passGuidance(env, run?.id ?? 0)).toEqual([[GUIDANCE, "addressed"]]);
    expect(onThePullRequest(env)).toContain(GUIDANCE);
    // Both sessions are the pass's, and both are costed.
    expect(await env.lisa.store.runs.cost(run?.id ?? 0)).toBeGreaterThan(0);
    // Two OpenCode start-ups, each slow on a loaded machine.
  }, 180_000);

  it("Gemini CLI: a writer's redirect mid-session stops the session at once, and a resumed session of the same pass gets it in its prompt", async () => {
    const server = await model.start({
      turns: [
        // The first session runs a long command when the redirect comes; it is stopped in the middle of it.
        { tool_use: [{ name: "run_shell_command", input: { command: "sleep 20", description: "Take a while" } }] },
        {
          tool_use: [
            {
              name: "run_shell_command",
              input: {
                command: `printf '# Hello World\\n' > README.md && printf '%s' '${JSON.stringify(MANIFEST)}' > .lisa-manifest.json`,
                description: "Fix the heading",
              },
            },
          ],
        },
        { text: "Fixed the heading and took the guidance in." },
      ],
    });
    const env = await lisa.start(server.url, `label: bug\nproviders:\n  - gemini: { model: gemini-2.5-flash }\n${GATES}`);
    await labelAndWaitForSession(env, server);

    await env.github.commentOnIssue(HELLO_WORLD, ISSUE, `/lisa redirect ${GUIDANCE}`, OWNER);
    await env.settle();

    expect(comments(env).some((body) => body.includes("the running gemini session stops at its next safe point"))).toBe(true);
    const [run] = await env.lisa.store.runs.inState("review");
    const [step] = (await env.lisa.store.steps.of(run?.id ?? 0)).filter((s) => s.position > 0);
    expect((await env.lisa.store.sessions.of(step?.id ?? 0)).map((s) => [s.purpose, s.state])).toEqual([
      ["implement", "interrupted"],
      ["resume", "succeeded"],
    ]);
    const resumed = sent(server).filter((text) => text.includes(GUIDANCE));
    expect(resumed.length).toBeGreaterThan(0);
    expect(resumed[0]).toContain("stopped to give you guidance the reviewers wrote while it worked");
    expect(await passGuidance(env, run?.id ?? 0)).toEqual([[GUIDANCE, "addressed"]]);
  }, 180_000);

  it("a reader's redirect mid-session gets the usual refusal and reaches neither the session nor any pass", async () => {
    const server = await model.start({
      turns: [
        { tool_use: [{ name: "Bash", input: { command: "sleep 6", description: "Take a while" } }] },
        { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
        { text: "Fixed the heading." },
      ],
    });
    const env = await lisa.start(server.url, `label: bug\n${GATES}`);
    env.github.addCollaborator(HELLO_WORLD, "rita", "read");
    await labelAndWaitForSession(env, server);

    await env.github.commentOnIssue(HELLO_WORLD, ISSUE, `/lisa redirect ${GUIDANCE}`, "rita");
    await env.settle();

    expect(
      comments(env).some((body) => body.includes("@rita, only people with write access to this repository can steer Lisa.")),
    ).toBe(true);
    expect(comments(env).some((body) => body.includes("Taken into pass"))).toBe(false);
    expect(sent(server).some((text) => text.includes(GUIDANCE))).toBe(false);
    const [run] = await env.lisa.store.runs.inState("review");
    expect(await env.lisa.store.guidance.ledger(run?.id ?? 0)).toEqual([]);
    expect(await env.lisa.store.guidance.queued(run?.id ?? 0)).toEqual([]);
  });

  it("a redirect while the gates run (the session has ended) waits for the next pass, as before", async () => {
    const server = await model.start({
      turns: [
        { tool_use: [{ name: "Write", input: { file_path: "{{CWD}}/README.md", content: "# Hello World\n" } }] },
        { text: "Fixed the heading." },
      ],
    });
    const env = await lisa.start(server.url, "label: bug\ngates:\n  - sleep 4 && grep -q 'Hello World' README.md\n");
    await env.github.labelIssue(HELLO_WORLD, ISSUE, "bug", OWNER);
    const run = await waitFor("the run", async () => (await env.lisa.store.runs.inState("running"))[0], 60_000);
    await waitFor(
      "the gates to run",
      async () => (await env.lisa.store.steps.of(run.id)).some((s) => s.position > 0 && s.phase === "gates"),
      60_000,
    );

    await env.github.commentOnIssue(HELLO_WORLD, ISSUE, `/lisa redirect ${GUIDANCE}`, OWNER);
    await env.settle();

    expect(comments(env).some((body) => body.includes("Queued for pass 2, after the current pass"))).toBe(true);
    const [step] = (await env.lisa.store.steps.of(run.id)).filter((s) => s.position > 0);
    const sessions = await env.lisa.store.sessions.of(step?.id ?? 0);
    expect(sessions.filter((s) => s.pass === 1).map((s) => s.purpose)).toEqual(["implement"]);
    expect((await env.lisa.store.guidance.ledger(run.id)).map((g) => [g.pass, g.body])).toEqual([[2, GUIDANCE]]);
  });

  it("a stalled Claude Code session with guidance written to it still dies at its stall deadline", async () => {
    const server = await model.start({ turns: [{ stall: true }] });
    const env = await lisa.start(server.url, "label: bug\nlimits:\n  stall_timeout: 5s\n");
    const started = Date.now();
    await labelAndWaitForSession(env, server);

    await env.github.commentOnIssue(HELLO_WORLD, ISSUE, `/lisa redirect ${GUIDANCE}`, OWNER);
    await env.settle();

    expect(comments(env).some((body) => body.includes("Taken into pass 1 while it runs"))).toBe(true);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(trackingBody(env.github, HELLO_WORLD, ISSUE)).toContain(
      "The agent session failed (stalled): claude printed nothing for 5s and was killed",
    );
    expect(env.github.pulls(HELLO_WORLD)).toEqual([]);
  });
});
