import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../dev/free-port.ts";
import { createTestProbot } from "../../dev/test-probot.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { signature } from "../../emulator/webhooks.ts";
import { serveLisa } from "../../src/http/serve-lisa.ts";
import { rawPost } from "../support/raw-post.ts";

const SECRET = "serve-lisa-secret";
const WEBHOOKS = "/api/github/webhooks";

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** Lisa's server on a free port, with `appFn` loaded; what its request handler and webhook handlers saw. */
async function serve(options: { host?: string; bodyLimit?: number; proxyUrl?: string } = {}) {
  const probot = createTestProbot({ secret: SECRET });
  const seen = { requests: [] as string[], events: [] as string[] };
  const served = await serveLisa(
    (app, { addHandler }) => {
      app.onAny(async (event) => void seen.events.push(event.name));
      addHandler((request, response) => {
        seen.requests.push(`${request.method} ${request.url}`);
        if (request.url !== "/slow") return false;
        // An answer that takes a while, as a webhook whose store is busy.
        setTimeout(() => response.end("done"), 200);
        return true;
      });
    },
    { probot, host: options.host ?? "127.0.0.1", port: 0, webhookPath: WEBHOOKS, ...options },
  );
  closing.push(() => served.close());
  const port = (served.server.address() as AddressInfo).port;
  return { served, seen, base: `http://127.0.0.1:${port}` };
}

function signedPing(delivery = randomUUID()) {
  const body = JSON.stringify({ zen: "Speak like a human.", hook_id: 1 });
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-github-event": "ping",
      "x-github-delivery": delivery,
      "x-hub-signature-256": signature(SECRET, body),
    },
  };
}

describe("serveLisa", () => {
  it("passes a signed webhook to the App and answers 200, a wrong signature 400, any other path 404", async () => {
    const { seen, base } = await serve();
    const ping = signedPing();
    expect((await fetch(`${base}${WEBHOOKS}`, { method: "POST", ...ping })).status).toBe(200);
    const forged = { ...ping.headers, "x-hub-signature-256": signature("another-secret", ping.body) };
    expect((await fetch(`${base}${WEBHOOKS}`, { method: "POST", body: ping.body, headers: forged })).status).toBe(400);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
    expect(seen.events).toEqual(["ping"]);
  });

  it("refuses a body over its limit with 413 before the App's handlers see the request", async () => {
    const { seen, base } = await serve({ bodyLimit: 1024 });
    const { headers } = signedPing();
    expect(await rawPost(`${base}${WEBHOOKS}`, { ...headers, "content-length": "2048" }, 2048)).toBe(413);
    expect(await rawPost(`${base}${WEBHOOKS}`, { ...headers, "transfer-encoding": "chunked" }, 2048)).toBe(411);
    expect(seen.requests).toEqual([]);
    expect(seen.events).toEqual([]);
  });

  it("leaves other HTTP servers in the process alone: no listener of theirs is rewired", async () => {
    await serve({ bodyLimit: 1024 });
    // A body of undeclared length, which Lisa's server refuses with 411, is read here as sent.
    const other: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let size = 0;
      request.on("data", (chunk: Buffer) => (size += chunk.length));
      request.on("end", () => response.end(String(size)));
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    closing.push(() => new Promise((resolve) => other.close(resolve)));
    const { port } = other.address() as AddressInfo;
    expect(await rawPost(`http://127.0.0.1:${port}/`, { "transfer-encoding": "chunked" }, 2 * 1024 * 1024)).toBe(200);
  });

  it("forwards a smee.io channel's events to the webhook path, over loopback when it listens on every address", async () => {
    const listeners: ServerResponse[] = [];
    const channel = createServer((request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.write("event: ready\ndata: {}\n\n");
      listeners.push(response);
      request.once("close", () => listeners.splice(listeners.indexOf(response), 1));
    });
    await new Promise<void>((resolve) => channel.listen(0, "127.0.0.1", resolve));
    closing.push(async () => {
      for (const listener of listeners) listener.destroy();
      await new Promise((resolve) => channel.close(resolve));
    });
    const proxyUrl = `http://127.0.0.1:${(channel.address() as AddressInfo).port}/channel`;
    const { seen } = await serve({ host: "0.0.0.0", proxyUrl });
    expect(listeners).toHaveLength(1);

    // As smee.io sends a delivery: its headers as keys, its payload under `body`.
    const ping = signedPing();
    const message = { ...ping.headers, body: JSON.parse(ping.body), query: {}, timestamp: Date.now() };
    for (const listener of listeners) listener.write(`id: ${randomUUID()}\ndata: ${JSON.stringify(message)}\n\n`);
    await waitFor("the forwarded ping", () => seen.events.includes("ping"));
    expect(seen.requests).toEqual([`POST ${WEBHOOKS}`]);
  });

  it("refuses to start when the channel cannot be reached, and leaves its port free", async () => {
    const proxyUrl = `http://127.0.0.1:${await freePort()}/channel`;
    const port = await freePort();
    const probot = createTestProbot({ secret: SECRET });
    await expect(
      serveLisa(() => undefined, { probot, host: "127.0.0.1", port, webhookPath: WEBHOOKS, proxyUrl }),
    ).rejects.toThrow(`could not connect to WEBHOOK_PROXY_URL ${proxyUrl}`);
    const again = createServer();
    await new Promise<void>((resolve) => again.listen(port, "127.0.0.1", resolve));
    await new Promise((resolve) => again.close(resolve));
  });

  it("says which port is taken", async () => {
    const { served } = await serve();
    const { port } = served.server.address() as AddressInfo;
    const probot = createTestProbot({ secret: SECRET });
    await expect(serveLisa(() => undefined, { probot, host: "127.0.0.1", port, webhookPath: WEBHOOKS })).rejects.toThrow(
      `port ${port} on 127.0.0.1 is already in use; set PORT (or HOST) to another`,
    );
  });

  it("close() stops listening, lets an answer under way finish, and cuts a stalled connection after its patience", async () => {
    const { served, base } = await serve();
    const { port } = served.server.address() as AddressInfo;
    // A client that sent half a request head and nothing more.
    const stalled = connect(port, "127.0.0.1");
    await new Promise((resolve) => stalled.once("connect", resolve));
    stalled.write("POST /api/github/webhooks HTTP/1.1\r\nhost: x\r\n");
    const cut = new Promise((resolve) => stalled.once("close", resolve));
    const answer = fetch(`${base}/slow`).then(async (response) => [response.status, await response.text()]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await served.close(1_000);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await answer).toEqual([200, "done"]);
    await cut;
    await expect(fetch(`${base}/elsewhere`)).rejects.toThrow();
  });
});
