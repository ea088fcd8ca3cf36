import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../dev/free-port.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { signature } from "../../emulator/webhooks.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { parsePrometheusText } from "../support/prometheus-text.ts";
import { rawPost } from "../support/raw-post.ts";

// Lisa as `npm start` runs it (src/main.ts, the server Lisa creates), sent bodies GitHub never sends.

const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
const SECRET = "a-webhook-secret-for-this-test-of-at-least-32-bytes";

let lisa: ChildProcess;
let port: number;

beforeAll(async () => {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  lisa = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", MAIN], {
    cwd: tempDir("lisa-cwd"),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ID: "1",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: SECRET,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      LISA_DATA_DIR: path.join(tempDir("lisa-data"), "data"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  port = await new Promise<number>((resolve, reject) => {
    let out = "";
    lisa.stdout?.on("data", (chunk) => {
      out += chunk;
      const found = /Listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (found) resolve(Number(found[1]));
    });
    lisa.on("exit", (code) => reject(new Error(`Lisa exited (${code}) before listening:\n${out}`)));
  });
}, 30_000);

afterAll(() => {
  lisa?.kill("SIGKILL");
});

/** Lisa's resident memory, in bytes. */
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${lisa.pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

const post = (size: number, headers: Record<string, string>) =>
  rawPost(`http://127.0.0.1:${port}/api/github/webhooks`, headers, size);

const WEBHOOK = { "content-type": "application/json", "x-github-event": "issues", "x-github-delivery": "d-1" };

describe("the HTTP server of `npm start`", () => {
  it("refuses a 30 MiB body with 413 before reading it", async () => {
    const before = rss();
    const status = await post(30 * 1024 * 1024, {
      ...WEBHOOK,
      "content-length": String(30 * 1024 * 1024),
      "x-hub-signature-256": "sha256=00",
    });
    expect(status).toBe(413);
    // Reading it would have grown Lisa by more than the body itself.
    expect(rss() - before).toBeLessThan(16 * 1024 * 1024);
  });

  it("refuses a body of undeclared length with 411", async () => {
    expect(await post(1024 * 1024, { ...WEBHOOK, "transfer-encoding": "chunked" })).toBe(411);
  });

  it("still answers a signed webhook of ordinary size", async () => {
    const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/api/github/webhooks",
          headers: { ...WEBHOOK, "x-github-event": "ping", "x-hub-signature-256": signature(SECRET, body) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    expect(status).toBe(200);
  });

  it("serves /healthz and /metrics beside it", async () => {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok" });
    const { types } = parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    expect(types.get("lisa_runs")).toBe("gauge");
  });
});

describe("`npm start` before the App is registered", () => {
  it("serves Probot's registration flow when there are no credentials", async () => {
    const cwd = tempDir("lisa-unregistered");
    const setupPort = await freePort();
    // NO_SMEE_SETUP: the flow would otherwise ask smee.io for a channel.
    const setup = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", MAIN], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, PORT: String(setupPort), HOST: "127.0.0.1", NO_SMEE_SETUP: "true" },
      stdio: "ignore",
    });
    try {
      const answer = await waitFor("the registration flow to listen", () =>
        fetch(`http://127.0.0.1:${setupPort}/`, { redirect: "manual" }).catch(() => undefined),
      );
      expect(answer.status).toBe(302);
      expect(answer.headers.get("location")).toBe("/probot");
    } finally {
      setup.kill("SIGKILL");
    }
  });

  it("stops at once, saying why, when the key it names cannot be read", () => {
    const cwd = tempDir("lisa-bad-key");
    const result = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", MAIN], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, APP_ID: "1", PRIVATE_KEY_PATH: "missing.pem", PORT: "0", HOST: "127.0.0.1" },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.stderr).toContain(
      'Lisa cannot start; fix these environment variables:\nthe App\'s private key: Private key does not exists at path: "missing.pem"',
    );
    expect(result.status).toBe(1);
  });
});
