import type { IncomingMessage, ServerResponse } from "node:http";
import type { LisaMetrics } from "../metrics/lisa-metrics.ts";
import type { Worker } from "../runs/worker.ts";
import type { Store } from "../store/store.ts";

/**
 * `/healthz` and `/metrics` on Lisa's own HTTP server. Health is ready when the worker takes work
 * and the store answers (a Docker HEALTHCHECK, a load balancer); metrics are Prometheus' text
 * format. True when the request was one of these.
 */
export async function serveOperatorEndpoints(
  request: IncomingMessage,
  response: ServerResponse,
  lisa: { store: Store; worker: Worker; metrics: LisaMetrics },
): Promise<boolean> {
  if (request.method !== "GET") return false;
  const path = (request.url ?? "").split("?")[0];
  if (path === "/healthz") {
    let body: Record<string, unknown>;
    try {
      body = {
        status: lisa.worker.running ? "ok" : "stopped",
        pendingCommands: lisa.store.pendingCommands(),
        queuedRuns: lisa.store.runsIn("queued").length,
        runningRuns: lisa.store.runsIn("running").length,
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
