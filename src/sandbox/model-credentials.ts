import { timingSafeEqual } from "node:crypto";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import { type HostRule, ruleOfUrl } from "./egress-rules.ts";

/**
 * One model API a sandboxed CLI reaches through Lisa with a credential it never holds: the CLI's
 * base URL is `http://127.0.0.1:<bridge>/<capability>/<id>`, and Lisa forwards each request below it
 * to `upstream` with `header` set.
 */
export interface ModelRoute {
  /** The path segment after the capability that names this route, e.g. `anthropic`. */
  id: string;
  /** The provider's API base URL, from Lisa's own settings: requests go below its path, over TLS for https. */
  upstream: string;
  /** Paths below `upstream` the credential may be used for, e.g. `/v1/`; anything else is refused. */
  paths: readonly string[];
  /** The credential header every forwarded request gets, replacing whatever the CLI sent. */
  header: { name: string; value: string };
  /** The upstream may be a loopback or private address (LISA_ALLOW_PRIVATE_MODEL_API). */
  private?: boolean | undefined;
}

/** What one sandbox's model endpoint forwards: only requests that carry its own capability. */
export interface ModelAccessGrant {
  /** A random value of this session's: the first path segment of every request. */
  capability: string;
  routes: readonly ModelRoute[];
}

export interface ModelEndpoint {
  /** Takes a client connection whose first request head (`buffered`) the egress proxy has already read. */
  accept(client: Socket, buffered: Buffer): void;
  close(): void;
}

/**
 * Whether a request head's first line is addressed to the bridge itself, and so to the model
 * endpoint: in origin form (`POST /path`), as a proxy request for the bridge's own loopback address
 * (`POST http://127.0.0.1:<bridge>/path`), or a CONNECT to it (`tunnel`: undici's proxy agent tunnels
 * even plain HTTP), whose tunnel then carries plain requests to it. Nothing addressed elsewhere is.
 */
export function bridgeRequest(requestLine: string, bridgePort: number | undefined): "request" | "tunnel" | undefined {
  const [, method = "", target = ""] = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(requestLine) ?? [];
  if (target.startsWith("/")) return "request";
  const url = method === "CONNECT" ? `http://${target}` : target;
  if (!url.startsWith("http://") || !URL.canParse(url) || bridgePort === undefined) return undefined;
  const { hostname, port } = new URL(url);
  if (!["127.0.0.1", "localhost", "[::1]"].includes(hostname) || Number(port || 80) !== bridgePort) return undefined;
  return method === "CONNECT" ? "tunnel" : "request";
}

/** Request fields that carry a credential (the CLI's placeholder, or anything it made up) or belong to one hop. */
const DROPPED = new Set([
  "authorization",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "cookie",
  "proxy-authorization",
  "proxy-connection",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** Answer fields that belong to one hop. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "trailer", "upgrade", "proxy-authenticate"]);

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The path below the route, when it is one the credential may be used for: no dot segments, no backslashes, under `paths`. */
function allowedPath(rest: string, route: ModelRoute): string | undefined {
  // An encoded slash or backslash would be a separator only to the server behind it.
  if (!rest.startsWith("/") || rest.startsWith("//") || /%2f|%5c|\\/i.test(rest)) return undefined;
  let normal: string;
  try {
    normal = new URL(rest, "http://model.invalid").pathname;
  } catch {
    return undefined;
  }
  if (normal !== rest) return undefined;
  return route.paths.some((prefix) => rest.startsWith(prefix)) ? rest : undefined;
}

export interface ModelEndpointOptions {
  grant: ModelAccessGrant;
  /** The address `host:port` may be reached at under `rule`, as the egress proxy decides it (its `decide`). */
  reach: (rule: HostRule, host: string, port: number) => Promise<{ address: string } | { refused: string }>;
  /** How long the model API may take to accept a connection. */
  waitMs: number;
  /** Told of each request refused (who it was for, as a short name, and why). */
  onRefused: (host: string, reason: string) => void;
  /** Told of each request forwarded, with the address it went to. */
  onAllowed: (host: string, address: string) => void;
}

/**
 * The model endpoint of one sandbox: an HTTP server that reads the connections the egress proxy
 * hands it (requests addressed to the bridge on the sandbox's own loopback, bridgeRequest). A request
 * is forwarded only when its path starts with this session's capability and names one of its routes,
 * and only to that route's own API host, below its base path, at an address checked as the egress
 * proxy checks one; every credential header the CLI sent is dropped and the route's is set. Nothing
 * else (CONNECT tunnels, `allow_hosts`) ever gets a credential.
 */
export function createModelEndpoint(options: ModelEndpointOptions): ModelEndpoint {
  const { grant } = options;
  const upstreams = new Set<ReturnType<typeof httpRequest>>();
  const refuse = (res: ServerResponse, status: number, who: string, reason: string) => {
    options.onRefused(who, reason);
    res.writeHead(status, { "content-type": "text/plain", connection: "close" }).end(`Lisa's model endpoint: ${reason}\n`);
  };

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://model.invalid");
    const [, capability = "", id = "", ...rest] = url.pathname.split("/");
    if (!sameSecret(capability, grant.capability)) return refuse(res, 403, "model endpoint", "not this session's capability");
    const route = grant.routes.find((r) => r.id === id);
    if (!route) return refuse(res, 404, "model endpoint", "no such model API");
    const base = new URL(route.upstream);
    const path = allowedPath(`/${rest.join("/")}`, route);
    if (!path) return refuse(res, 403, base.host, "not a path of the model API");
    const rule = ruleOfUrl(route.upstream, route.private === true);
    const port = base.port ? Number(base.port) : base.protocol === "https:" ? 443 : 80;
    const decision = rule ? await options.reach(rule, base.hostname, port) : { refused: "no valid URL" };
    if ("refused" in decision) return refuse(res, 502, base.host, decision.refused);
    options.onAllowed(base.host, decision.address);
    url.searchParams.delete("key");
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!DROPPED.has(name) && value !== undefined) headers[name] = value;
    headers.host = base.host;
    headers[route.header.name] = route.header.value;
    const send = base.protocol === "https:" ? httpsRequest : httpRequest;
    const out = send({
      host: decision.address,
      port,
      servername: base.protocol === "https:" ? base.hostname : undefined,
      method: req.method,
      path: `${base.pathname.replace(/\/$/, "")}${path}${url.search}`,
      headers,
      timeout: options.waitMs,
      // A connection of its own, as the proxy gives each request: a pooled one would never say `connect`.
      agent: false,
    });
    upstreams.add(out);
    out.on("close", () => upstreams.delete(out));
    out.once("socket", (socket) => socket.once("connect", () => out.setTimeout(0)));
    out.on("timeout", () => out.destroy(new Error("the model API did not answer in time")));
    out.on("response", (answer) => {
      const fields = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
      res.writeHead(answer.statusCode ?? 502, fields);
      answer.pipe(res);
    });
    out.on("error", () => (res.headersSent ? res.destroy() : refuse(res, 502, base.host, "the model API could not be reached")));
    res.on("close", () => out.destroy());
    req.pipe(out);
  }

  const server = createServer((req, res) => {
    forward(req, res).catch(() => res.destroy());
  });
  // A websocket or other upgrade is no model API request.
  server.on("upgrade", (_req, socket: Socket) => socket.destroy());
  return {
    accept(client, buffered) {
      client.unshift(buffered);
      server.emit("connection", client);
      client.resume();
    },
    close() {
      for (const out of upstreams) out.destroy();
      server.closeAllConnections();
    },
  };
}
