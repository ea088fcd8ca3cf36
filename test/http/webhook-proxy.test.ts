import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { freePort } from "../../dev/free-port.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { signature } from "../../emulator/webhooks.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The README's laptop path: GitHub posts to a smee.io channel, and `npm start` with
// WEBHOOK_PROXY_URL in its environment reads the channel's event stream and posts each event to
// Lisa. A local channel stands in for smee.io: it takes a POST as smee.io does and sends it down
// the event stream in smee's format, one JSON object per message with the delivery's headers as
// keys and its payload under `body`. `lisa emulator` plays GitHub and posts to the channel.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LISA = path.join(ROOT, "src/cli/lisa.ts");
const MAIN = path.join(ROOT, "src/main.ts");

const listeners: ServerResponse[] = [];
const channel = createServer((request, response) => {
  if (request.url !== "/channel") return void response.writeHead(404).end();
  if (request.method === "GET") {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    response.write("event: ready\ndata: {}\n\n");
    listeners.push(response);
    return;
  }
  void relay(request).then(() => response.writeHead(200).end("ok"));
});

/** Sends a POST the channel received down its event stream, as smee.io does. */
async function relay(request: IncomingMessage): Promise<void> {
  let raw = "";
  for await (const chunk of request) raw += chunk;
  const message = { ...request.headers, body: JSON.parse(raw), query: {}, timestamp: Date.now() };
  for (const listener of listeners) listener.write(`id: ${randomUUID()}\ndata: ${JSON.stringify(message)}\n\n`);
}

const children: ChildProcess[] = [];
/** Spawns `command` in a process group of its own and keeps what it prints. */
function start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"], detached: true });
  children.push(child);
  const printed = { output: "" };
  child.stdout?.on("data", (chunk: Buffer) => (printed.output += chunk));
  child.stderr?.on("data", (chunk: Buffer) => (printed.output += chunk));
  return printed;
}

let channelUrl = "";
let emulatorUrl = "";
let lisa: { output: string };

beforeAll(async () => {
  await new Promise<void>((resolve) => channel.listen(0, "127.0.0.1", resolve));
  channelUrl = `http://127.0.0.1:${(channel.address() as { port: number }).port}/channel`;
  const dir = tempDir("webhook-proxy");
  const envFile = path.join(dir, "lisa.env");
  const PATH = `${path.dirname(process.execPath)}:/usr/bin:/bin`;
  const emulator = start(LISA, ["emulator", "--port", "0", "--webhook-url", channelUrl, "--write-env", envFile], {
    cwd: dir,
    env: { PATH, HOME: dir },
  });
  emulatorUrl = await waitFor(
    "the emulator to print its address",
    () => /at (http:\/\/127\.0\.0\.1:\d+):/.exec(emulator.output)?.[1],
  );
  const written = Object.fromEntries(
    readFileSync(envFile, "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  const agent = createFakeClaude([
    { write: { "health.ts": "export const health = () => 'ok';\n" }, manifest: { title: "Health", what: "health()." } },
  ]);
  lisa = start(process.execPath, ["--disable-warning=ExperimentalWarning", MAIN], {
    cwd: ROOT,
    env: {
      ...written,
      PATH,
      HOME: dir,
      WEBHOOK_PROXY_URL: channelUrl,
      PORT: String(await freePort()),
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      LISA_DATA_DIR: path.join(dir, "data"),
      LISA_CLAUDE_PATH: agent.binary,
    },
  });
  const forwarding = /Forwarding http:\/\/127\.0\.0\.1:\d+\/channel to http:\/\/127\.0\.0\.1:\d+\/api\/github\/webhooks/;
  // Not forwarding after 30 s fails below, with what Lisa printed instead.
  await waitFor("Lisa to forward the channel", () => forwarding.test(lisa.output), 30_000).catch(() => {});
  expect(lisa.output).toMatch(forwarding);
}, 60_000);

afterAll(async () => {
  for (const child of children.splice(0)) if (child.pid) process.kill(-child.pid, "SIGKILL");
  for (const listener of listeners) listener.destroy();
  await new Promise((resolve) => channel.close(resolve));
});

/** The statuses Lisa answered forwarded POSTs with, as the proxy logs them, from `since` on. */
const answers = (since: number) =>
  [...lisa.output.slice(since).matchAll(/"msg":"POST http:\/\/127\.0\.0\.1:\d+\/api\/github\/webhooks - (\d{3})"/g)].map((m) =>
    Number(m[1]),
  );

describe("npm start with WEBHOOK_PROXY_URL (a smee.io channel)", () => {
  it("gets a labeled issue's webhook through the channel and answers on the issue", async () => {
    const since = lisa.output.length;
    const opened = await fetch(`${emulatorUrl}/_emulator/issues`, {
      method: "POST",
      body: JSON.stringify({ title: "Add a health check" }),
    });
    expect(opened.status).toBe(201);
    type State = { issues: { comments: { user: string; body: string }[] }[] };
    const comment = await waitFor(
      `Lisa to comment on the issue:\n${lisa.output}`,
      async () => {
        const state = (await (await fetch(`${emulatorUrl}/_emulator/state`)).json()) as State;
        return state.issues[0]?.comments.find((c) => c.user === "lisa[bot]");
      },
      30_000,
    );
    expect(comment.body).toContain("<!-- lisa:tracking run=1 -->");
    expect(comment.body).toContain("Requested by @octocat");
    expect(answers(since)).toContain(200);
  });

  it("forwards the headers as they came: an event signed with another secret is refused", async () => {
    const since = lisa.output.length;
    const body = JSON.stringify({ zen: "Design for failure.", hook_id: 1 });
    const posted = await fetch(channelUrl, {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": randomUUID(),
        "x-hub-signature-256": signature("not-the-secret", body),
      },
    });
    expect(posted.status).toBe(200);
    // The run of the first test still sends webhooks, all signed right: the one refusal is this one.
    await waitFor(`Lisa to refuse the ping:\n${lisa.output}`, () => answers(since).includes(400), 15_000);
    expect(answers(since).filter((status) => status !== 200)).toEqual([400]);
  });
});
