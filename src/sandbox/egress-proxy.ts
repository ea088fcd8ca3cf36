import { lookup as dnsLookup } from "node:dns/promises";
import { createServer, type IncomingMessage, request } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { classifyAddress } from "./address-class.ts";
import { type HostRule, matchRule, normalizeHost } from "./egress-rules.ts";

/** Connections one sandboxed process was refused, for the review package. */
export interface NetworkTally {
  refused: number;
  /** Distinct `host:port` it was refused, as it asked for them (attacker text), the first few only. */
  hosts: string[];
}

const MAX_HOSTS = 10;
const MAX_HOST_LENGTH = 100;

export const emptyTally = (): NetworkTally => ({ refused: 0, hosts: [] });

/** Adds `from`'s refusals to `into`, keeping the host list short. */
export function addTally(into: NetworkTally, from: NetworkTally): void {
  into.refused += from.refused;
  for (const host of from.hosts) if (!into.hosts.includes(host) && into.hosts.length < MAX_HOSTS) into.hosts.push(host);
}

export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface EgressProxyOptions {
  /** Where the proxy listens: a unix socket, bound into the sandbox. */
  socketPath: string;
  rules: readonly HostRule[];
  /** Told of each refused connection, with why. */
  onRefused?: (host: string, reason: string) => void;
  lookup?: Lookup;
}

export interface EgressProxy {
  tally: NetworkTally;
  close(): Promise<void>;
}

type Decision = { address: string } | { refused: string };

/**
 * Whether `host:port` may be reached, decided on the address it resolves to now: the caller then
 * connects to exactly that address, so a name cannot resolve to a public address for the check and
 * to a private one for the connection. Every address of the name must be public unless the rule
 * that allows it says it may be private.
 */
export async function decide(rules: readonly HostRule[], host: string, port: number, lookup: Lookup): Promise<Decision> {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return { refused: "no valid port" };
  const rule = matchRule(rules, host, port);
  if (!rule) return { refused: "not on the allowlist" };
  const name = normalizeHost(host);
  let addresses: string[];
  try {
    addresses = isIP(name) ? [name] : (await lookup(name)).map((entry) => entry.address);
  } catch {
    return { refused: "does not resolve" };
  }
  if (addresses.length === 0) return { refused: "does not resolve" };
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind !== "public" && !rule.private) return { refused: `resolves to a ${kind} address (${address})` };
  }
  return { address: addresses[0] as string };
}

/** `host` and `port` of a CONNECT target (`example.com:443`, `[::1]:443`) or of an absolute http URL. */
function target(authority: string): { host: string; port: number; path: string } | undefined {
  if (!authority.startsWith("http://")) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s]+):(\d{1,5})$/.exec(authority);
    return match ? { host: match[1] as string, port: Number(match[2]), path: "" } : undefined;
  }
  try {
    const url = new URL(authority);
    return { host: url.hostname, port: url.port ? Number(url.port) : 80, path: `${url.pathname}${url.search}` };
  } catch {
    return undefined;
  }
}

/**
 * Lisa's egress proxy for one sandboxed process, listening on a unix socket that is the only way
 * out of the sandbox's network namespace. It answers HTTP CONNECT (HTTPS and anything tunnelled)
 * and plain HTTP requests with an absolute URL, lets through only allowlisted hosts that resolve
 * to public addresses (see `decide`), and answers everything else 403, counting it.
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const lookup = options.lookup ?? systemLookup;
  const tally = emptyTally();
  const sockets = new Set<Socket>();
  const refuse = (host: string, reason: string) => {
    const shown = host.slice(0, MAX_HOST_LENGTH);
    addTally(tally, { refused: 1, hosts: [shown] });
    options.onRefused?.(shown, reason);
  };

  const server = createServer((req, res) => {
    const to = req.url ? target(req.url) : undefined;
    if (!to || !req.url?.startsWith("http://")) {
      refuse(req.url ?? "", "not an absolute http URL");
      res.writeHead(400).end("Lisa's egress proxy takes CONNECT or absolute http:// URLs.\n");
      return;
    }
    void forwardRequest(req, res, to);
  });

  async function forwardRequest(
    req: IncomingMessage,
    res: import("node:http").ServerResponse,
    to: { host: string; port: number; path: string },
  ) {
    const decision = await decide(options.rules, to.host, to.port, lookup);
    if ("refused" in decision) {
      refuse(`${to.host}:${to.port}`, decision.refused);
      res.writeHead(403).end(`Lisa's sandbox does not allow ${to.host}:${to.port}.\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = request(
      { host: decision.address, port: to.port, method: req.method, path: to.path, headers, setHost: false, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  }

  server.on("connect", async (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const to = target(req.url ?? "");
    const decision = to ? await decide(options.rules, to.host, to.port, lookup) : { refused: "no valid target" };
    const shown = to ? `${to.host}:${to.port}` : (req.url ?? "");
    if ("refused" in decision) {
      refuse(shown, decision.refused);
      client.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const upstream = connect({ host: decision.address, port: to?.port ?? 0 });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => {
      if (connected) client.destroy();
      else client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    });
    client.on("close", () => upstream.destroy());
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("clientError", (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => resolve());
  });
  return {
    tally,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
