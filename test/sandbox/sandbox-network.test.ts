import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyTally } from "../../src/sandbox/egress-proxy.ts";
import { runSandboxed } from "../../src/sandbox/run-sandboxed.ts";
import type { Sandbox } from "../../src/sandbox/sandbox-settings.ts";
import { tempDir } from "../support/git-fixtures.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const sh = (script: string, sandbox: Sandbox, input?: string) =>
  runSandboxed("sh", ["-c", script], { cwd: tempDir("sandboxed"), env, timeoutMs: 20_000, sandbox, input });

const server = createServer((req, res) => res.end(`hello ${req.url}`));
let port = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the sandbox's network", () => {
  it("has none without an egress allowlist: not even the host's loopback", async () => {
    const result = await sh(`curl -sS --max-time 5 http://127.0.0.1:${port}/direct; echo "curl $?"`, { mode: "bwrap" });
    expect(result.stdout).toContain("curl 7");
    expect(result.stdout).not.toContain("hello");
  });

  it("reaches an allowed host only through Lisa's proxy, which counts what it refuses", async () => {
    const tally = emptyTally();
    const egress = { rules: [{ host: "127.0.0.1", port, private: true }], tally };
    const result = await sh(
      [
        `curl -sS --max-time 5 http://127.0.0.1:${port}/proxied; echo " curl $?"`,
        `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/bypass; echo " curl $?"`,
        `curl -sS --max-time 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:${port + 1}/other; echo " curl $?"`,
        'echo "$HTTPS_PROXY $https_proxy $(printenv NO_PROXY || echo unset)"',
      ].join("; "),
      { mode: "bwrap", egress },
    );
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toBe("hello /proxied curl 0");
    expect(lines[1]).toMatch(/curl 7$/);
    expect(lines[2]).toBe("403 curl 0");
    expect(lines[3]).toBe("http://127.0.0.1:3128 http://127.0.0.1:3128 unset");
    expect(tally).toEqual({ refused: 1, hosts: [`127.0.0.1:${port + 1}`] });
  });

  it("passes standard input, exit status and signals through the bridge", async () => {
    const egress = { rules: [] };
    expect((await sh("cat; exit 7", { mode: "bwrap", egress }, "from stdin")).stdout).toBe("from stdin");
    expect((await sh("exit 7", { mode: "bwrap", egress })).exitCode).toBe(7);
    const killed = await sh("kill -TERM $$", { mode: "bwrap", egress });
    expect(killed.exitCode === undefined || killed.exitCode === 128 + 15).toBe(true);
  });

  it("with LISA_SANDBOX=off has no namespace and no proxy: the host's network, open, and its proxy variables", async () => {
    const tally = emptyTally();
    const result = await runSandboxed(
      "sh",
      ["-c", `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/open; echo " $HTTP_PROXY"`],
      {
        cwd: tempDir("unsandboxed"),
        env: { ...env, HTTP_PROXY: "http://corporate:8080" },
        timeoutMs: 10_000,
        sandbox: { mode: "off", egress: { rules: [], tally } },
      },
    );
    expect(result.stdout.trim()).toBe("hello /open http://corporate:8080");
    expect(tally.refused).toBe(0);
  });

  it("drops the host's proxy variables, which would lead nowhere or around the proxy", async () => {
    const result = await runSandboxed("sh", ["-c", "for v in HTTP_PROXY NO_PROXY no_proxy; do printenv $v || echo none; done"], {
      cwd: tempDir("sandboxed"),
      env: { ...env, HTTP_PROXY: "http://corporate:8080", NO_PROXY: "*", no_proxy: "localhost" },
      timeoutMs: 10_000,
      sandbox: { mode: "bwrap" },
    });
    expect(result.stdout.trim().split("\n")).toEqual(["none", "none", "none"]);
  });
});
