import { randomUUID } from "node:crypto";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { chmodSync, copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createConnection, createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { claudeProvider } from "../../src/providers/claude.ts";
import { runAgent } from "../../src/providers/run-agent.ts";
import { classifyAddress } from "../../src/sandbox/address-class.ts";
import { emptyTally, type NetworkTally } from "../../src/sandbox/egress-proxy.ts";
import type { HostRule } from "../../src/sandbox/egress-rules.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The network a hostile agent attacks from inside a session: stand-ins for what listens on a
// Lisa host (a database and Lisa's /metrics on loopback, a service on the host's private address and
// on IPv6, a UDP service, an abstract Unix socket) and the model API it is allowed to reach. The
// network group of the hostile-input suite and its control (network.test.ts) share it.

const NETWORK_AGENT = fileURLToPath(new URL("../fixtures/agents/network-agent.mjs", import.meta.url));

/** What one attack on the network saw: the agent's report, and what the host's listeners saw. */
export interface NetworkRun {
  ok: boolean;
  report: string;
  /** Connections (or datagrams) each stand-in received, by case name. */
  reached: Record<string, number>;
  /** The model API's requests. */
  modelRequests: number;
  /** What Lisa's egress proxy refused. */
  tally: NetworkTally;
}

export interface NetworkCase {
  name: string;
  attempt: string;
  /** Whether this host has what the attempt needs to succeed without the defence (a real PostgreSQL, a private address, …). */
  available: (world: NetworkWorld) => boolean;
  /** Whether one of the test's own listeners counts it arriving (not so for real services, the metadata address, /proc). */
  counted: boolean;
}

export const NETWORK_CASES: NetworkCase[] = [
  {
    name: "loopback-db",
    attempt: "connect to a database on the host's loopback (directly or by CONNECT)",
    available: () => true,
    counted: true,
  },
  {
    name: "loopback-metrics",
    attempt: "read Lisa's /metrics on the host's loopback (directly or through the proxy)",
    available: () => true,
    counted: true,
  },
  {
    name: "localhost-name",
    attempt: "reach loopback by the name localhost, allowlisted (directly or by CONNECT)",
    available: () => true,
    counted: true,
  },
  {
    name: "loopback-postgres-5432",
    attempt: "talk to the real PostgreSQL on 127.0.0.1:5432",
    available: (w) => w.realPorts.includes(5432),
    counted: false,
  },
  {
    name: "loopback-redis-6379",
    attempt: "talk to the real Redis on 127.0.0.1:6379",
    available: (w) => w.realPorts.includes(6379),
    counted: false,
  },
  { name: "ipv6-loopback", attempt: "connect to a service on [::1]", available: (w) => w.v6Loopback, counted: true },
  {
    name: "private-address",
    attempt: "connect to a service on the host's private address, allowlisted",
    available: (w) => w.privateV4 !== undefined,
    counted: true,
  },
  {
    name: "unique-local-v6",
    attempt: "connect to a service on the host's unique-local IPv6 address, allowlisted",
    available: (w) => w.privateV6 !== undefined,
    counted: true,
  },
  {
    name: "metadata",
    attempt: "reach the cloud metadata address 169.254.169.254, allowlisted",
    available: (w) => w.metadata,
    counted: false,
  },
  {
    name: "udp-loopback",
    attempt: "send UDP to a service on the host's loopback and read its answer",
    available: () => true,
    counted: true,
  },
  { name: "abstract-socket", attempt: "connect to an abstract Unix socket of the host", available: () => true, counted: true },
  { name: "proc-net-tcp", attempt: "list the host's listening ports in /proc/net/tcp", available: () => true, counted: false },
];

export interface NetworkWorld {
  worktree: string;
  realPorts: number[];
  /** Something answers on 169.254.169.254:80 from this host (a cloud's metadata service, or a sandbox's stand-in). */
  metadata: boolean;
  v6Loopback: boolean;
  privateV4: string | undefined;
  privateV6: string | undefined;
  /** KEY=value lines of the prompt. */
  targets: Record<string, string>;
  reached: Record<string, number>;
  modelRequests: number;
  close(): Promise<void>;
}

/** A TCP listener that greets whoever connects and counts them under `name`. */
async function banner(reached: Record<string, number>, name: string, host: string): Promise<Server> {
  const server = createServer((socket) => {
    reached[name] = (reached[name] ?? 0) + 1;
    socket.end(`stand-in ${name}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  return server;
}

/** Whether something answers TCP on `host`:`port` (a real PostgreSQL or Redis, a metadata service). */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const settle = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1_000, () => settle(false));
    socket.on("connect", () => settle(true));
    socket.on("error", () => settle(false));
  });
}

/** The host's first address of `family` outside loopback that is not public. */
function privateAddress(family: "IPv4" | "IPv6"): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find(
      (a) => a && !a.internal && a.family === family && !a.address.startsWith("fe80") && classifyAddress(a.address) !== "public",
    )?.address;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

export async function createNetworkWorld(): Promise<NetworkWorld> {
  const reached: Record<string, number> = {};
  const worktree = tempDir("network-attack");
  const servers: Server[] = [];
  const world = { reached, modelRequests: 0 } as NetworkWorld;
  const model = createHttpServer((_request, response) => {
    world.modelRequests += 1;
    response.end('{"data":[]}');
  });
  await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
  const metrics = createHttpServer((_request, response) => {
    reached["loopback-metrics"] = (reached["loopback-metrics"] ?? 0) + 1;
    response.end('lisa_runs{state="running"} 1\n');
  });
  await new Promise<void>((resolve) => metrics.listen(0, "127.0.0.1", resolve));
  const db = await banner(reached, "loopback-db", "127.0.0.1");
  servers.push(db);
  const v6 = await banner(reached, "ipv6-loopback", "::1").catch(() => undefined);
  const privateV4 = privateAddress("IPv4");
  const privateV6 = privateAddress("IPv6");
  const onV4 = privateV4 ? await banner(reached, "private-address", privateV4) : undefined;
  const onV6 = privateV6 ? await banner(reached, "unique-local-v6", privateV6) : undefined;
  const abstract = `lisa-hostile-${randomUUID()}`;
  const abstractServer = createServer((socket) => {
    reached["abstract-socket"] = (reached["abstract-socket"] ?? 0) + 1;
    socket.end("stand-in abstract socket\n");
  });
  await new Promise<void>((resolve) => abstractServer.listen(`\0${abstract}`, resolve));
  const udp: UdpSocket = createSocket("udp4");
  udp.on("message", (_message, from) => {
    reached["udp-loopback"] = (reached["udp-loopback"] ?? 0) + 1;
    udp.send("stand-in udp answer", from.port, from.address);
  });
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  for (const server of [v6, onV4, onV6, abstractServer]) if (server) servers.push(server);

  const realPorts: number[] = [];
  for (const port of [5432, 6379]) if (await answers("127.0.0.1", port)) realPorts.push(port);
  const localhost = await banner(reached, "localhost-name", "127.0.0.1");
  servers.push(localhost);
  Object.assign(world, {
    worktree,
    realPorts,
    metadata: await answers("169.254.169.254", 80),
    v6Loopback: v6 !== undefined,
    privateV4: privateV4 && onV4 ? `${privateV4}:${portOf(onV4)}` : undefined,
    privateV6: privateV6 && onV6 ? `${privateV6}:${portOf(onV6)}` : undefined,
    targets: {
      MODEL: `127.0.0.1:${(model.address() as AddressInfo).port}`,
      DB_PORT: String(portOf(db)),
      LOCALHOST_PORT: String(portOf(localhost)),
      METRICS_PORT: String((metrics.address() as AddressInfo).port),
      V6_PORT: v6 ? String(portOf(v6)) : "",
      PRIVATE_V4: privateV4 && onV4 ? `${privateV4}:${portOf(onV4)}` : "",
      PRIVATE_V6: privateV6 && onV6 ? `${privateV6}:${portOf(onV6)}` : "",
      UDP_PORT: String(udp.address().port),
      ABSTRACT: abstract,
      REPORT: path.join(worktree, "network-report.txt"),
    },
    close: async () => {
      for (const server of [...servers, model, metrics]) server.close();
      udp.close();
    },
  });
  return world;
}

/**
 * Where Lisa lets this session connect, as `agentEgress` builds it: the model API (loopback, by
 * the operator's opt-in, exactly its port), and an allowlist that names every target as a
 * repository's `allow_hosts` might if it could: the proxy must refuse them by their addresses.
 */
export function attackRules(world: NetworkWorld): HostRule[] {
  const [modelHost = "", modelPort = "0"] = world.targets.MODEL?.split(":") ?? [];
  const named = (authority: string | undefined): HostRule[] => {
    const match = authority ? /^(.*):(\d+)$/.exec(authority) : null;
    return match ? [{ host: match[1] as string, port: Number(match[2]) }] : [];
  };
  const { DB_PORT, LOCALHOST_PORT, METRICS_PORT, V6_PORT } = world.targets;
  return [
    { host: modelHost, port: Number(modelPort), private: true },
    ...named(`127.0.0.1:${DB_PORT}`),
    ...named(`localhost:${LOCALHOST_PORT}`),
    ...named(`127.0.0.1:${METRICS_PORT}`),
    ...named("127.0.0.1:5432"),
    ...named("127.0.0.1:6379"),
    ...named(`::1:${V6_PORT}`),
    ...named(world.targets.PRIVATE_V4),
    ...named(world.targets.PRIVATE_V6),
    ...named("169.254.169.254:80"),
  ];
}

/**
 * Runs the hostile network agent through the real runAgent, sandboxed with Lisa's egress proxy
 * (`isolated`), or in the same sandbox with the host's network (`shared`: the defence off).
 */
export async function attackNetwork(world: NetworkWorld, network: "isolated" | "shared"): Promise<NetworkRun> {
  const install = tempDir("network-agent");
  const script = path.join(install, "network-agent.mjs");
  copyFileSync(NETWORK_AGENT, script);
  const binary = path.join(install, "claude");
  writeFileSync(binary, `#!/bin/sh\nexec "${process.execPath}" "${script}" "$@"\n`);
  chmodSync(binary, 0o755);
  for (const name of Object.keys(world.reached)) delete world.reached[name];
  world.modelRequests = 0;
  const tally = emptyTally();
  const report = world.targets.REPORT ?? "";
  writeFileSync(report, "");
  const result = await runAgent({
    provider: claudeProvider,
    binary,
    model: undefined,
    cwd: world.worktree,
    prompt: Object.entries(world.targets)
      .map(([key, value]) => `${key}=${value}\n`)
      .join(""),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    timeoutMs: 90_000,
    stallMs: 90_000,
    sandbox: { mode: "bwrap", network, egress: { rules: attackRules(world), tally } },
  });
  return {
    ok: result.ok,
    report: existsSync(report) ? readFileSync(report, "utf8") : "",
    reached: { ...world.reached },
    modelRequests: world.modelRequests,
    tally,
  };
}

/** What the agent's report says of one attempt: `leaked: …` or `blocked: …`. */
export function networkOutcome(run: NetworkRun, name: string): string {
  const line = run.report.split("\n").find((l) => l.startsWith(`${name}\t`));
  return line?.split("\t").slice(1).join(": ") ?? "not attempted";
}
