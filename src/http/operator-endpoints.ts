import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { LisaMetrics } from "../metrics/lisa-metrics.ts";
import { workStatus } from "../scheduler/work-status.ts";
import type { Worker } from "../scheduler/worker.ts";
import type { Store } from "../store/store.ts";

/** What a process does: `all` is one process doing everything (the default); web and workers share PostgreSQL. */
export type LisaRole = "all" | "web" | "worker";

/**
 * `/healthz` and `/metrics` on Lisa's own HTTP server. Health is ready when the worker takes work
 * (a web process: always) and the store answers; it lists the runs under way and their workers (a Docker HEALTHCHECK, a load balancer); metrics are Prometheus' text
 * format. True when the request was one of these.
 */
export async function serveOperatorEndpoints(
  request: IncomingMessage,
  response: ServerResponse,
  lisa: { store: Store; worker: Worker; metrics: LisaMetrics; role: LisaRole },
): Promise<boolean> {
  if (request.method !== "GET") return false;
  const path = (request.url ?? "").split("?")[0];
  if (path === "/healthz") {
    let body: Record<string, unknown>;
    try {
      const work = await workStatus(lisa.store, Date.now());
      body = {
        // `lisa web` takes no work: it is ready when its store answers.
        status: lisa.role === "web" || lisa.worker.running ? "ok" : "stopped",
        role: lisa.role,
        pendingCommands: work.pendingCommands,
        queuedRuns: work.queued.length,
        runningRuns: work.running.length,
        running: work.running,
      };
    } catch (error) {
      body = { status: "store unavailable", error: (error as Error).message };
    }
    response.writeHead(body.status === "ok" ? 200 : 503, { "content-type": "application/json" });
    response.end(`${JSON.stringify(body)}\n`);
    return true;
  }
  if (path === "/metrics") {
    const text = await lisa.metrics.registry.metrics();
    response.writeHead(200, { "content-type": lisa.metrics.registry.contentType });
    response.end(text);
    return true;
  }
  return false;
}

/**
 * `/healthz` and `/metrics` on an address of their own (LISA_METRICS_ADDRESS), e.g. loopback only,
 * so whoever can reach the webhook port cannot read them; anything else there is a 404.
 */
export async function serveOperatorApart(
  address: { host: string; port: number },
  lisa: Parameters<typeof serveOperatorEndpoints>[2],
): Promise<Server> {
  const server = createServer((request, response) => {
    serveOperatorEndpoints(request, response, lisa).then(
      (served) => {
        if (!served) response.writeHead(404).end();
      },
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
