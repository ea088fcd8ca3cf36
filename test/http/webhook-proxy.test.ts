import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../dev/free-port.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { signature } from "../../emulator/webhooks.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The README's laptop path: GitHub posts to a smee.io channel, and `npm start` with
// WEBHOOK_PROXY_URL in its environment reads the channel's event stream and posts each event to
// Lisa. A local event-stream server stands in for smee.io, sending events in smee's format: one
// JSON object per message, the delivery's headers as keys, its payload under `body`.

const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
const SECRET = "a-webhook-secret-for-the-proxy-test";

const listeners: ServerResponse[] = [];
const channel = createServer((request, response) => {
  if (request.method !== "GET" || request.url !== "/channel") return void response.writeHead(404).end();
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  response.write("event: ready\ndata: {}\n\n");
  listeners.push(response);
});
let lisa: ChildProcess;
let output = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => channel.listen(0, "127.0.0.1", resolve));
  const { port } = channel.address() as { port: number };
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  lisa = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", MAIN], {
    cwd: tempDir("proxy-cwd"),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ID: "1",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_PROXY_URL: `http://127.0.0.1:${port}/channel`,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      LISA_DATA_DIR: path.join(tempDir("proxy-data"), "data"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  lisa.stdout?.on("data", (chunk) => (output += chunk));
  lisa.stderr?.on("data", (chunk) => (output += chunk));
  const forwarding = /Forwarding http:\/\/127\.0\.0\.1:\d+\/channel to http:\/\/127\.0\.0\.1:\d+\/api\/github\/webhooks/;
  // Not forwarding after 30 s fails below, with what Lisa printed instead.
  await waitFor("Lisa to forward the channel", () => forwarding.test(output) || lisa.exitCode !== null, 30_000).catch(() => {});
  expect(output).toMatch(forwarding);
}, 60_000);

afterAll(async () => {
  lisa?.kill("SIGKILL");
  for (const listener of listeners) listener.destroy();
  await new Promise((resolve) => channel.close(resolve));
});

/** Puts a delivery on the channel as smee.io does, and resolves with the status Lisa answered the forwarded POST with. */
async function deliver(event: string, payload: object, secret: string): Promise<number> {
  const delivery = randomUUID();
  const body = JSON.stringify(payload);
  const message = {
    "x-github-event": event,
    "x-github-delivery": delivery,
    "x-hub-signature-256": signature(secret, body),
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/abc1234",
    body: payload,
    query: {},
    timestamp: Date.now(),
  };
  const before = output.length;
  for (const listener of listeners) listener.write(`id: ${delivery}\ndata: ${JSON.stringify(message)}\n\n`);
  // The proxy logs each forwarded POST with Lisa's answer.
  const answered = await waitFor(
    `the proxy to forward ${event} to Lisa:\n${output}`,
    () => /"msg":"POST http:\/\/127\.0\.0\.1:\d+\/api\/github\/webhooks - (\d{3})"/.exec(output.slice(before)) ?? undefined,
    15_000,
  );
  return Number(answered[1]);
}

describe("npm start with WEBHOOK_PROXY_URL (a smee.io channel)", () => {
  it("reads the channel and forwards a signed event to Lisa, which accepts it", async () => {
    expect(await deliver("ping", { zen: "Keep it logically awesome.", hook_id: 1 }, SECRET)).toBe(200);
  });

  it("forwards the headers as they came: an event signed with another secret is refused", async () => {
    expect(await deliver("ping", { zen: "Design for failure.", hook_id: 1 }, "not-the-secret")).toBe(400);
  });
});
