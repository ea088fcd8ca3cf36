import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ApplicationFunction, createNodeMiddleware, type Probot } from "probot";
import { SmeeClient } from "smee-client";
import { GITHUB_MAX_PAYLOAD, refuseUnboundedBody } from "./body-limit.ts";

export interface ServeOptions {
  /** The App's Probot; its webhook middleware answers `webhookPath`. */
  probot: Probot;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  webhookPath: string;
  /** A smee.io channel GitHub posts to when it cannot reach this machine (a laptop): its events are posted here. */
  proxyUrl?: string;
  /** Bodies over this many bytes are refused unread; GitHub's 25 MB cap by default. */
  bodyLimit?: number;
}

export interface LisaServer {
  server: Server;
  /** Where it listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /**
   * Stops the proxy and stops listening, then waits for the answers under way (webhooks are stored
   * in milliseconds); a connection still open after `patienceMs` (a stalled client) is cut.
   */
  close(patienceMs?: number): Promise<void>;
}

/**
 * Lisa's HTTP server: Probot's webhook middleware, with `appFn` loaded into it (its handlers, and the
 * request handlers it adds, such as `/healthz`), behind Lisa's own check of each body's declared
 * length, and a 404 for anything else. With `proxyUrl`, the channel's events are forwarded to the
 * webhook path, as Probot's `run` did.
 */
export async function serveLisa(appFn: ApplicationFunction, options: ServeOptions): Promise<LisaServer> {
  const { probot, webhookPath } = options;
  const limit = options.bodyLimit ?? GITHUB_MAX_PAYLOAD;
  const middleware = await createNodeMiddleware(appFn, { probot, webhooksPath: webhookPath });
  const log = probot.log.child({ name: "server" });
  const server = createServer((request, response) => {
    // Before the middleware reads the body: it reads it whole to check the signature.
    if (refuseUnboundedBody(request, response, limit)) return;
    const started = performance.now();
    response.once("finish", () => {
      const ms = Math.round(performance.now() - started);
      log.info(
        { delivery: request.headers["x-github-delivery"] },
        `${request.method} ${request.url} ${response.statusCode} - ${ms}ms`,
      );
    });
    // The middleware answers its own errors with 500; `next` is the 404 for any other path.
    void middleware(request, response, () => {
      if (!response.headersSent) response.writeHead(404).end();
    });
  });
  const address = await listen(server, options.port, options.host);
  const url = `http://${bracketed(options.host)}:${address.port}`;
  log.info(`Listening on ${url}`);

  let proxy: SmeeClient | undefined;
  if (options.proxyUrl) {
    // A wildcard address is not one to post to: the proxy posts over loopback.
    const target = address.address === "0.0.0.0" ? "127.0.0.1" : address.address === "::" ? "::1" : address.address;
    proxy = new SmeeClient({
      source: options.proxyUrl,
      target: `http://${bracketed(target)}:${address.port}${webhookPath}`,
      logger: probot.log.child({ name: "webhook-proxy" }),
    });
    try {
      await proxy.start();
    } catch (error) {
      await new Promise((resolve) => server.close(resolve));
      throw new Error(`could not connect to WEBHOOK_PROXY_URL ${options.proxyUrl}`, { cause: error });
    }
  }

  return {
    server,
    url,
    async close(patienceMs = 5_000) {
      await proxy?.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const cut = setTimeout(() => server.closeAllConnections(), patienceMs);
      await closed;
      clearTimeout(cut);
    },
  };
}

/** Listens, or rejects with a message that says what to change when the port is taken. */
function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`port ${port} on ${host} is already in use; set PORT (or HOST) to another`, { cause: error })
          : error,
      );
    });
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

/** An IPv6 address as a URL needs it. */
const bracketed = (host: string) => (host.includes(":") ? `[${host}]` : host);
