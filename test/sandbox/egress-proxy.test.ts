import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decide, type EgressProxy, type Lookup, startEgressProxy } from "../../src/sandbox/egress-proxy.ts";
import type { HostRule } from "../../src/sandbox/egress-rules.ts";
import { tempDir } from "../support/git-fixtures.ts";

/** A resolver that knows only the names the test gives it. */
const fakeDns =
  (names: Record<string, string[]>): Lookup =>
  async (host) => {
    const addresses = names[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0)) await close();
});

/** An HTTP server on 127.0.0.1 that answers every request with its method and path. */
async function upstream(): Promise<{ server: Server; port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
    res.end(`upstream saw ${req.method} ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

async function proxyWith(
  rules: HostRule[],
  lookup: Lookup = fakeDns({}),
  waitMs?: number,
): Promise<EgressProxy & { socketPath: string; log: string[] }> {
  const socketPath = path.join(tempDir("egress"), "proxy.sock");
  const log: string[] = [];
  const proxy = await startEgressProxy({
    socketPath,
    rules,
    lookup,
    onRefused: (host, reason) => log.push(`${host}: ${reason}`),
    ...(waitMs ? { waitMs } : {}),
  });
  cleanup.push(() => proxy.close());
  return Object.assign(proxy, { socketPath, log });
}

/** Sends CONNECT `authority` through the proxy, then `then` through the tunnel; returns all it read. */
function connectThrough(socketPath: string, authority: string, then = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString();
      if (answer.includes("200 Connection Established\r\n\r\n") && then) {
        socket.write(then);
        then = "";
      }
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

/** A plain HTTP request for `url` through the proxy. */
function getThrough(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Writes `head` to the proxy's socket as a client would and resolves with all it answers. */
function exchange(socketPath: string, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
    socket.write(head);
  });
}

describe("the egress proxy", () => {
  it("tunnels CONNECT to an allowed host and forwards plain HTTP requests", async () => {
    const { port, seen } = await upstream();
    // The tests' model server is on loopback: allowed by an exact rule that may be private.
    const proxy = await proxyWith([{ host: "127.0.0.1", port, private: true }]);
    const tunnelled = await connectThrough(
      proxy.socketPath,
      `127.0.0.1:${port}`,
      `GET /tunnelled HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    );
    expect(tunnelled).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    expect(tunnelled).toContain("upstream saw GET /tunnelled");
    const plain = await getThrough(proxy.socketPath, `http://127.0.0.1:${port}/plain?x=1`);
    expect(plain).toEqual({ status: 200, body: "upstream saw GET /plain?x=1" });
    expect(seen).toEqual([`GET /tunnelled host=127.0.0.1:${port}`, `GET /plain?x=1 host=127.0.0.1:${port}`]);
    expect(proxy.tally).toEqual({ refused: 0, hosts: [] });
  });

  it("sends a plain HTTP request with the Host its URL names, not another site the allowed address may serve", async () => {
    const { port, seen } = await upstream();
    const proxy = await proxyWith([{ host: "127.0.0.1", port, private: true }]);
    const answer = await exchange(
      proxy.socketPath,
      `GET http://127.0.0.1:${port}/fronted HTTP/1.1\r\nHost: evil.example\r\nConnection: keep-alive\r\n\r\n`,
    );
    expect(seen).toEqual([`GET /fronted host=127.0.0.1:${port}`]);
    // One request per connection: the client is told so, and the connection ends.
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain("\r\nConnection: close\r\n");
    expect(answer).not.toMatch(/keep-alive/i);
  });

  it("refuses a request head with a bare line break or NUL in it, which could smuggle a header", async () => {
    const { port, seen } = await upstream();
    const proxy = await proxyWith([{ host: "127.0.0.1", port, private: true }]);
    const send = (head: string) => exchange(proxy.socketPath, head);
    const url = `http://127.0.0.1:${port}/x`;
    expect(await send(`GET ${url} HTTP/1.1\r\nX-A: a\nHost: evil.example\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
    expect(await send(`GET ${url} HTTP/1.1\r\nX-A: a\0b\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
    expect(await send(`GET ${url}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
    expect(seen).toEqual([]);
    expect(proxy.tally.refused).toBe(3);
  });

  it("answers 403 to a host off the allowlist, and counts and logs it", async () => {
    const { port, seen } = await upstream();
    const proxy = await proxyWith([{ host: "127.0.0.1", port, private: true }]);
    expect(await connectThrough(proxy.socketPath, "evil.example:443")).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect((await getThrough(proxy.socketPath, "http://evil.example/steal")).status).toBe(403);
    // The same loopback address on another port is another host.
    expect(await connectThrough(proxy.socketPath, `127.0.0.1:${port + 1}`)).toMatch(/^HTTP\/1\.1 403/);
    expect(proxy.tally).toEqual({ refused: 3, hosts: ["evil.example:443", "evil.example:80", `127.0.0.1:${port + 1}`] });
    expect(proxy.log).toEqual([
      "evil.example:443: not on the allowlist",
      "evil.example:80: not on the allowlist",
      `127.0.0.1:${port + 1}: not on the allowlist`,
    ]);
    expect(seen).toEqual([]);
  });

  it("refuses an allowed name that resolves to a loopback, private or metadata address", async () => {
    const { port, seen } = await upstream();
    const dns = fakeDns({
      "registry.example": ["127.0.0.1"],
      "mirror.example": ["93.184.216.34", "10.0.0.5"],
      "meta.example": ["::ffff:169.254.169.254"],
    });
    const rules = ["registry.example", "mirror.example", "meta.example"].map((host) => ({ host, port }));
    const proxy = await proxyWith(rules, dns);
    for (const host of ["registry.example", "mirror.example", "meta.example"])
      expect(await connectThrough(proxy.socketPath, `${host}:${port}`)).toMatch(/^HTTP\/1\.1 403/);
    expect((await getThrough(proxy.socketPath, `http://registry.example:${port}/`)).status).toBe(403);
    expect(proxy.log).toEqual([
      `registry.example:${port}: resolves to a loopback address (127.0.0.1)`,
      `mirror.example:${port}: resolves to a private address (10.0.0.5)`,
      `meta.example:${port}: resolves to a link-local address (::ffff:169.254.169.254)`,
      `registry.example:${port}: resolves to a loopback address (127.0.0.1)`,
    ]);
    expect(proxy.tally.refused).toBe(4);
    expect(seen).toEqual([]);
  });

  it("refuses CONNECT to IP literals in private ranges, even when a rule names them without letting them be private", async () => {
    const proxy = await proxyWith([
      { host: "192.168.1.10", port: 443 },
      { host: "::1", port: 443 },
    ]);
    for (const authority of ["192.168.1.10:443", "[::1]:443", "169.254.169.254:80", "[fd00::1]:443", "localhost:443"])
      expect(await connectThrough(proxy.socketPath, authority)).toMatch(/^HTTP\/1\.1 403/);
    expect(proxy.log).toEqual([
      "192.168.1.10:443: resolves to a private address (192.168.1.10)",
      "[::1]:443: resolves to a loopback address (::1)",
      "169.254.169.254:80: not on the allowlist",
      "[fd00::1]:443: not on the allowlist",
      "localhost:443: not on the allowlist",
    ]);
  });
});

describe("decide", () => {
  it("connects to the address it checked, and lets a wildcard rule cover subdomains only", async () => {
    const dns = fakeDns({ "files.pythonhosted.org": ["151.101.0.223"], "pythonhosted.org": ["151.101.0.1"] });
    const rules = [{ host: "*.pythonhosted.org", port: 443 }];
    expect(await decide(rules, "files.pythonhosted.org", 443, dns)).toEqual({ address: "151.101.0.223" });
    expect(await decide(rules, "FILES.PythonHosted.org.", 443, dns)).toEqual({ address: "151.101.0.223" });
    expect(await decide(rules, "pythonhosted.org", 443, dns)).toEqual({ refused: "not on the allowlist" });
    expect(await decide(rules, "evilpythonhosted.org", 443, dns)).toEqual({ refused: "not on the allowlist" });
    expect(await decide([{ host: "gone.example", port: 443 }], "gone.example", 443, dns)).toEqual({
      refused: "does not resolve",
    });
  });
});

describe("the egress proxy's limits", () => {
  it("lets go of a client that sends no whole request head in time, and of a lookup that never answers", async () => {
    const never: Lookup = () => new Promise(() => {});
    const proxy = await proxyWith([{ host: "stuck.example", port: 443 }], never, 300);
    const idle = connect(proxy.socketPath);
    const closed = new Promise<number>((resolve) => {
      const started = Date.now();
      idle.on("close", () => resolve(Date.now() - started));
    });
    idle.write("CONNECT stuck.exa");
    expect(await closed).toBeLessThan(5_000);
    expect(await exchange(proxy.socketPath, "CONNECT stuck.example:443 HTTP/1.1\r\nHost: stuck.example:443\r\n\r\n")).toMatch(
      /^HTTP\/1\.1 403 /,
    );
    expect(proxy.log).toEqual(["stuck.example:443: does not resolve"]);
  });
  it("connects to the address it checked, not to what the name resolves to a moment later", async () => {
    const { port, seen } = await upstream();
    // First the allowed address, then (as a rebinding server would answer) an unroutable one.
    const answers = ["127.0.0.1", "192.0.2.1"];
    let lookups = 0;
    const rebinding: Lookup = async () => [{ address: answers[Math.min(lookups++, 1)] as string, family: 4 }];
    const proxy = await proxyWith([{ host: "rebind.example", port, private: true }], rebinding, 2_000);
    const answer = await exchange(
      proxy.socketPath,
      `GET http://rebind.example:${port}/x HTTP/1.1\r\nHost: rebind.example:${port}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(seen).toEqual([`GET /x host=rebind.example:${port}`]);
    expect(lookups).toBe(1);
  });
});
