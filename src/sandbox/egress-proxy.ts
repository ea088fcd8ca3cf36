// Over 250 lines: the proxy's decision, its CONNECT and plain HTTP paths and its tally share one allow list.
// Longer than most modules: the proxy's whole request path (decide, rewrite, pipe) and its hand-off
// to the model endpoint stay together, so each connection is judged in one place.
import { lookup as dnsLookup } from "node:dns/promises";
import { connect, createServer, isIP, type Socket } from "node:net";
import { classifyAddress } from "./address-class.ts";
import { type HostRule, matchRule, normalizeHost } from "./egress-rules.ts";
import { bridgeRequest, createModelEndpoint, type ModelAccessGrant } from "./model-credentials.ts";

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

/** How long a client may take to send its request head, a name to resolve, and an upstream to accept. */
const WAIT_MS = 10_000;
/** Connections one sandbox may hold open at once: each is a descriptor of Lisa's own. */
const MAX_CONNECTIONS = 256;

/** `promise`, or a rejection once `ms` have passed: a lookup stuck in the resolver must not hold a slot. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export interface EgressProxyOptions {
  /** Where the proxy listens: a unix socket, bound into the sandbox. */
  socketPath: string;
  rules: readonly HostRule[];
  /** Told of each refused connection, with why. */
  onRefused?: ((host: string, reason: string) => void) | undefined;
  /** Told of each connection let through, with the address it went to. */
  onAllowed?: ((host: string, address: string) => void) | undefined;
  lookup?: Lookup;
  /** How long a head, a lookup and an upstream's accept may take (10 s by default). */
  waitMs?: number;
  /**
   * The model APIs this sandbox reaches with credentials Lisa sets (model-credentials.ts): requests
   * addressed to the bridge itself (bridgeRequest: origin form, or a proxy request or CONNECT for its
   * own loopback address and `bridgePort`) go to them; requests for anywhere else never do.
   */
  models?: ModelAccessGrant | undefined;
  /** The port the bridge listens on inside the sandbox. */
  bridgePort?: number | undefined;
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
export async function decide(
  rules: readonly HostRule[],
  host: string,
  port: number,
  lookup: Lookup,
  waitMs = WAIT_MS,
): Promise<Decision> {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return { refused: "no valid port" };
  const rule = matchRule(rules, host, port);
  if (!rule) return { refused: "not on the allowlist" };
  const name = normalizeHost(host);
  let addresses: string[];
  try {
    addresses = isIP(name) ? [name] : (await within(lookup(name), waitMs)).map((entry) => entry.address);
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

/** The longest request head the proxy reads before it decides. */
const MAX_HEAD = 64 * 1024;

/** Request-head fields a proxy consumes, or that would keep the upstream connection open for a next request. */
const HOP_BY_HOP = /^(proxy-connection|proxy-authorization|connection|keep-alive):/i;

/**
 * The request head rewritten for the origin server: origin-form target, no proxy fields, one request
 * per connection, and the `Host` the URL names, so a server at an allowed address is not asked for
 * another site it also serves.
 */
function originHead(lines: string[], method: string, to: { host: string; port: number; path: string }): string {
  const fields = lines.slice(1).filter((line) => line && !HOP_BY_HOP.test(line) && !/^host:/i.test(line));
  const host = to.port === 80 ? to.host : `${to.host}:${to.port}`;
  return [`${method} ${to.path || "/"} HTTP/1.1`, `Host: ${host}`, ...fields, "Connection: close", "", ""].join("\r\n");
}

/**
 * Pipes an origin server's answer to the client with `Connection: close` in its head: the
 * connection carried one request to one checked address, so the client must not send the next
 * one (perhaps for another host) down it.
 */
function closingResponse(upstream: Socket, client: Socket): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf("\r\n\r\n");
    if (end < 0 && buffered.length < MAX_HEAD) return;
    upstream.off("data", onData);
    if (end < 0) return client.destroy();
    const lines = buffered.subarray(0, end).toString("latin1").split("\r\n");
    const head = [...lines.filter((line) => line && !HOP_BY_HOP.test(line)), "Connection: close", "", ""].join("\r\n");
    client.write(head);
    client.write(buffered.subarray(end + 4));
    upstream.pipe(client);
  };
  upstream.on("data", onData);
  upstream.once("end", () => client.end());
}

/**
 * Lisa's egress proxy for one sandboxed process, listening on a unix socket that is the only way
 * out of the sandbox's network namespace. It reads one request head per connection: CONNECT
 * (HTTPS, or anything tunnelled) or a plain HTTP request with an absolute URL. If `decide` lets
 * the target through, it connects to the address it checked and from then on only pipes bytes;
 * else it answers 403 and counts the refusal. It parses nothing after the head, so the agent's
 * bytes can only ever reach the address that was checked.
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const lookup = options.lookup ?? systemLookup;
  const waitMs = options.waitMs ?? WAIT_MS;
  const tally = emptyTally();
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };

  const answer = (client: Socket, status: string): void => {
    client.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  };
  const models = options.models
    ? createModelEndpoint({
        grant: options.models,
        reach: (rule, host, port) => decide([rule], host, port, lookup, waitMs),
        waitMs,
        onRefused: (host, reason) => {
          addTally(tally, { refused: 1, hosts: [host.slice(0, MAX_HOST_LENGTH)] });
          options.onRefused?.(host, reason);
        },
        onAllowed: (host, address) => options.onAllowed?.(host, address),
      })
    : undefined;

  async function handle(client: Socket, head: string, rest: Buffer): Promise<void> {
    const bridge = models && bridgeRequest(head.split("\r\n", 1)[0] ?? "", options.bridgePort);
    if (models && bridge === "request")
      return models.accept(client, Buffer.concat([Buffer.from(`${head}\r\n\r\n`, "latin1"), rest]));
    if (models && bridge === "tunnel") {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      return models.accept(client, rest);
    }
    let upstream: Socket | undefined;
    client.once("close", () => upstream?.destroy());
    const lines = head.split("\r\n");
    const [method = "", authority = ""] = (lines[0] ?? "").split(" ");
    const tunnel = method === "CONNECT";
    // A bare CR or LF (or NUL) inside a line could smuggle a header past the rewrite below.
    const wellFormed = /^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(lines[0] ?? "") && !lines.some((line) => /[\0\r\n]/.test(line));
    const to = wellFormed && (tunnel || authority.startsWith("http://")) ? target(authority) : undefined;
    if (!to) {
      const shown = authority.slice(0, MAX_HOST_LENGTH);
      addTally(tally, { refused: 1, hosts: [shown] });
      options.onRefused?.(shown, "not CONNECT or an absolute http:// URL");
      return answer(client, "400 Bad Request");
    }
    const shown = `${to.host}:${to.port}`.slice(0, MAX_HOST_LENGTH);
    const decision = await decide(options.rules, to.host, to.port, lookup, waitMs);
    if ("refused" in decision) {
      addTally(tally, { refused: 1, hosts: [shown] });
      options.onRefused?.(shown, decision.refused);
      return answer(client, "403 Forbidden");
    }
    if (client.destroyed) return;
    options.onAllowed?.(shown, decision.address);
    const out = connect({ host: decision.address, port: to.port });
    upstream = out;
    track(out);
    let connected = false;
    out.setTimeout(waitMs, () => out.destroy(new Error("the upstream did not accept in time")));
    out.once("connect", () => {
      connected = true;
      out.setTimeout(0);
      if (tunnel) client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      else out.write(originHead(lines, method, to));
      if (rest.length) out.write(rest);
      client.pipe(out);
      if (tunnel) out.pipe(client);
      else closingResponse(out, client);
    });
    out.on("error", () => (connected ? client.destroy() : answer(client, "502 Bad Gateway")));
  }

  const server = createServer((client) => {
    track(client);
    // A client that opens a connection and sends no whole head in time is let go.
    client.setTimeout(waitMs, () => client.destroy());
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0 && buffered.length < MAX_HEAD) return;
      client.setTimeout(0);
      client.off("data", onData);
      client.pause();
      if (end < 0) return answer(client, "431 Request Header Fields Too Large");
      void handle(client, buffered.subarray(0, end).toString("latin1"), buffered.subarray(end + 4));
    };
    client.on("data", onData);
  });

  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => resolve());
  });
  return {
    tally,
    close: () =>
      new Promise<void>((resolve) => {
        models?.close();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
