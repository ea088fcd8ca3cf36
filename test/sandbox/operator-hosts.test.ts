import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/config-schema.ts";
import { settingsFromEnv } from "../../src/config/env-schema.ts";
import { type Lookup, startEgressProxy } from "../../src/sandbox/egress-proxy.ts";
import { type HostRule, parseOperatorHosts } from "../../src/sandbox/egress-rules.ts";
import { sandboxHostRules } from "../../src/workflow/session/network-egress.ts";
import { tempDir } from "../support/git-fixtures.ts";

// Issue 41: an internal registry (a Verdaccio on a private address) is reachable from the sandbox
// only when the operator names it in LISA_EGRESS_ALLOW; a repository's config can never name it.

const REGISTRY = "registry.internal";
// The registry's name resolves to a private address; the test's server is on loopback, just as refused.
const lookup: Lookup = async (host) => {
  if (host !== REGISTRY) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return [{ address: "127.0.0.1", family: 4 }];
};

const registry = createServer((req, res) => res.end(`package ${req.url}`));
let port = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
  port = (registry.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => registry.close(() => resolve())));

/** `GET http://registry.internal:<port>/left-pad` through a proxy with `rules`: its status and body, and why it refused. */
async function fetchThroughProxy(rules: HostRule[]): Promise<{ status: number; body: string; refused: string[] }> {
  const socketPath = path.join(tempDir("operator-hosts"), "proxy.sock");
  const refused: string[] = [];
  const proxy = await startEgressProxy({
    socketPath,
    rules,
    lookup,
    onRefused: (host, reason) => refused.push(`${host}: ${reason}`),
  });
  try {
    const url = `http://${REGISTRY}:${port}/left-pad`;
    return await new Promise((resolve, reject) => {
      const req = request({ socketPath, path: url, headers: { host: `${REGISTRY}:${port}` } }, (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, refused }));
      });
      req.on("error", reject);
      req.end();
    });
  } finally {
    await proxy.close();
  }
}

const operatorHosts = (text: string): HostRule[] => {
  const parsed = parseOperatorHosts(text);
  if ("bad" in parsed) throw new Error(parsed.bad);
  return parsed.rules;
};

describe("LISA_EGRESS_ALLOW", () => {
  it("refuses a registry at a private address without it, even when the repository's allow_hosts names it", async () => {
    const result = await fetchThroughProxy(sandboxHostRules([], [`${REGISTRY}:${port}`]));
    expect(result.status).toBe(403);
    expect(result.refused).toEqual([`${REGISTRY}:${port}: resolves to a loopback address (127.0.0.1)`]);
  });

  it("lets the sandbox reach the registry the operator names, at its private address", async () => {
    const result = await fetchThroughProxy(sandboxHostRules(operatorHosts(`${REGISTRY}:${port}`), []));
    expect(result).toEqual({ status: 200, body: "package /left-pad", refused: [] });
  });

  it("lets a repository name no private address itself, not as an IP literal, nor another port of the operator's host", async () => {
    const config = (host: string) => configSchema.safeParse({ sandbox: { allow_hosts: [host] } }).success;
    expect(config("10.0.0.5:4873")).toBe(false);
    expect(config("127.0.0.1")).toBe(false);
    const otherPort = await fetchThroughProxy(sandboxHostRules(operatorHosts(`${REGISTRY}:1`), [`${REGISTRY}:${port}`]));
    expect(otherPort.status).toBe(403);
  });

  it("is read from Lisa's environment as host:port entries, each of which must name its port", () => {
    const settings = settingsFromEnv({ LISA_EGRESS_ALLOW: "registry.internal:4873, 10.0.0.5:8081 [fd00::1]:443" });
    expect(settings.sandbox.operatorHosts).toEqual([
      { host: "registry.internal", port: 4873, private: true },
      { host: "10.0.0.5", port: 8081, private: true },
      { host: "fd00::1", port: 443, private: true },
    ]);
    expect(() => settingsFromEnv({ LISA_EGRESS_ALLOW: "registry.internal" })).toThrow(
      'LISA_EGRESS_ALLOW="registry.internal": "registry.internal" is not host:port',
    );
  });
});
