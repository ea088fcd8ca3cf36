import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelRoute } from "../../src/sandbox/model-credentials.ts";
import { modelEndpointUrl, runSandboxed } from "../../src/sandbox/run-sandboxed.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The model endpoint of issue 36, through the real sandbox, bridge and egress proxy: a sandboxed
// process reaches a stand-in model API only with its own session's capability, only below the API's
// paths, and the API receives the real credential and never what the process sent.

const REAL_KEY = `real-model-key-${randomBytes(8).toString("hex")}`;
const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
let api: Server;
let upstream = "";

beforeAll(async () => {
  api = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  upstream = `http://127.0.0.1:${(api.address() as AddressInfo).port}/base`;
});
afterAll(() => new Promise<void>((resolve) => api.close(() => resolve())));

const route = (): ModelRoute => ({
  id: "anthropic",
  upstream,
  paths: ["/v1/"],
  header: { name: "x-api-key", value: REAL_KEY },
  private: true,
});

/** A node script in the sandbox: each of `requests` (direct, as a proxy request, or through a CONNECT tunnel to the bridge), its status and body on a line. */
function client(requests: { url: string; viaProxy?: boolean; viaTunnel?: boolean }[]): string {
  return `
const http = require("node:http");
const headers = { "x-api-key": "placeholder", authorization: "Bearer stolen", cookie: "c=1" };
const send = (options, resolve) => {
  const request = http.request({ ...options, method: "POST", headers }, (res) => {
    let text = ""; res.on("data", (c) => (text += c)); res.on("end", () => resolve(res.statusCode + " " + text.trim()));
  });
  request.on("error", (error) => resolve("error " + error.code));
  request.end('{"model":"m"}');
};
const ask = ({ url, viaProxy, viaTunnel }) => new Promise((resolve) => {
  const target = new URL(url);
  const path = target.pathname + target.search;
  if (viaProxy) return send({ host: "127.0.0.1", port: 3128, path: url }, resolve);
  if (!viaTunnel) return send({ host: target.hostname, port: target.port, path }, resolve);
  const connect = http.request({ host: "127.0.0.1", port: 3128, method: "CONNECT", path: target.host, agent: false });
  connect.on("connect", (res, socket) => send({ createConnection: () => socket, path, host: target.hostname }, resolve));
  connect.on("error", (error) => resolve("error " + error.code));
  connect.end();
});
(async () => { for (const r of ${JSON.stringify(requests)}) console.log(await ask(r)); })();`;
}

/** Runs `script` with node in a sandbox whose model endpoint holds `capability`. */
async function inSandbox(capability: string, script: string, timeoutMs = 20_000) {
  const result = await runSandboxed(process.execPath, ["-e", script], {
    cwd: tempDir("model-endpoint"),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    timeoutMs,
    sandbox: { mode: "bwrap", egress: { rules: [], models: { capability, routes: [route()] } } },
  });
  return result.stdout.trim().split("\n");
}

describe("a sandbox's model endpoint", () => {
  it("forwards its session's requests below the API's paths with the real credential, and drops whatever the process sent", async () => {
    seen.length = 0;
    const capability = randomBytes(16).toString("hex");
    const base = `${modelEndpointUrl(capability)}/anthropic`;
    const lines = await inSandbox(
      capability,
      client([
        { url: `${base}/v1/messages?beta=true&key=leak` },
        // A CLI that sends loopback through its proxy too: the bridge is its proxy, and answers the same,
        { url: `${base}/v1/messages?beta=true`, viaProxy: true },
        // also through a tunnel to itself, as undici's proxy agent reaches even a plain HTTP URL.
        { url: `${base}/v1/messages?beta=true`, viaTunnel: true },
      ]),
    );
    expect(lines).toEqual(['200 {"ok":true}', '200 {"ok":true}', '200 {"ok":true}']);
    expect(seen).toHaveLength(3);
    for (const request of seen) expect(request.headers["x-api-key"]).toBe(REAL_KEY);
    expect(seen[0]).toMatchObject({ method: "POST", url: "/base/v1/messages?beta=true", body: '{"model":"m"}' });
    expect(seen[0]?.headers["x-api-key"]).toBe(REAL_KEY);
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[0]?.headers.cookie).toBeUndefined();
    expect(seen[0]?.headers.host).toBe(new URL(upstream).host);
  });

  it("refuses another capability, another route, a path outside the API's and a way around it, and sends nothing", async () => {
    seen.length = 0;
    const capability = randomBytes(16).toString("hex");
    const other = modelEndpointUrl(randomBytes(16).toString("hex"));
    const mine = modelEndpointUrl(capability);
    const lines = await inSandbox(
      capability,
      client([
        { url: `${other}/anthropic/v1/messages` },
        { url: `${mine}/gemini/v1beta/models` },
        { url: `${mine}/anthropic/admin/keys` },
        { url: `${mine}/anthropic/v1/%2e%2e/admin` },
        { url: `${mine}/anthropic/v1/..%2fadmin` },
        // As a proxy request, to the API itself: the proxy has no rule for it, and would never add a key.
        { url: `${upstream}/v1/messages`, viaProxy: true },
      ]),
    );
    expect(lines.map((line) => line.split(" ")[0])).toEqual(["403", "404", "403", "403", "403", "403"]);
    expect(seen).toEqual([]);
  });

  it("is of no use to a second session's sandbox, even while the first one's runs", async () => {
    seen.length = 0;
    const first = randomBytes(16).toString("hex");
    const second = randomBytes(16).toString("hex");
    // The first session is running (it waits), and its capability has reached the second's agent.
    const running = inSandbox(first, "setTimeout(() => console.log('first done'), 4000)");
    const lines = await inSandbox(second, client([{ url: `${modelEndpointUrl(first)}/anthropic/v1/messages` }]));
    expect(lines[0]).toMatch(/^403 /);
    expect(seen).toEqual([]);
    expect(await running).toEqual(["first done"]);
  });

  it("reaches a model API over TLS by its name, checking the certificate against that name", async () => {
    const dir = tempDir("model-tls");
    const key = path.join(dir, "key.pem");
    const cert = path.join(dir, "cert.pem");
    await promisify(execFile)("openssl", [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", key, "-out", cert],
      ...["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
    ]);
    const script = fileURLToPath(new URL("../fixtures/model-endpoint-tls.ts", import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--disable-warning=ExperimentalWarning", script, key, cert, dir],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: cert },
        timeout: 30_000,
      },
    );
    const { answers, seen: apiSaw } = JSON.parse(stdout) as {
      answers: Record<string, string>;
      seen: { url: string; key?: string; host?: string }[];
    };
    expect(answers.named).toBe("HTTP/1.1 200 OK");
    // Reached at an address its certificate does not name, the API is not trusted with the key.
    expect(answers.unnamed).toBe("HTTP/1.1 502 Bad Gateway");
    expect(apiSaw).toHaveLength(1);
    expect(apiSaw[0]).toMatchObject({ url: "/api/v1/messages", key: "the-real-key" });
    expect(apiSaw[0]?.host).toMatch(/^localhost:\d+$/);
  });
});
