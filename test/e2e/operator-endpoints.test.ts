import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { parsePrometheusText } from "../support/prometheus-text.ts";

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

const origin = (e: EmulatedLisa) => new URL(e.webhookUrl).origin;

describe("/healthz and /metrics", () => {
  it("reports health, and counts a run's session, gate, GitHub requests and webhook in Prometheus' format", async () => {
    const agent = createFakeClaude([{ write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } }]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    const { github } = env;
    await github.createRepo("acme/api", {
      files: { "README.md": "# API\n" },
      config: "label: lisa\ngates:\n  - test -f health.ts\n",
    });
    github.addCollaborator("acme/api", "ann", "write");
    const issue = await github.createIssue("acme/api", { title: "Add a health endpoint", body: "", user: "ann" });
    await github.labelIssue("acme/api", issue.number, "lisa", "ann");
    await env.settle();

    const health = await fetch(`${origin(env)}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({
      status: "ok",
      role: "all",
      pendingCommands: 0,
      queuedRuns: 0,
      runningRuns: 0,
      running: [],
    });

    const response = await fetch(`${origin(env)}/metrics`);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const { types, samples } = parsePrometheusText(await response.text());
    const value = (name: string, labels: Record<string, string> = {}) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

    expect(Object.fromEntries([...types].filter(([name]) => name.startsWith("lisa_")))).toEqual({
      lisa_runs: "gauge",
      lisa_queue_depth: "gauge",
      lisa_sessions_total: "counter",
      lisa_agent_cost_usd_total: "counter",
      lisa_session_duration_seconds: "histogram",
      lisa_gate_duration_seconds: "histogram",
      lisa_sandbox_connections_total: "counter",
      lisa_github_requests_total: "counter",
      lisa_webhook_duration_seconds: "histogram",
      lisa_webhooks_dropped_total: "counter",
      lisa_forged_commands_total: "counter",
      lisa_setup_cache_total: "counter",
      lisa_setup_duration_seconds: "histogram",
      lisa_setup_restore_duration_seconds: "histogram",
      lisa_setup_store_duration_seconds: "histogram",
      lisa_setup_cache_bytes: "gauge",
      lisa_database_connection_losses_total: "counter",
      lisa_database_reconnects_total: "counter",
    });
    expect(value("lisa_runs", { state: "review" })).toBe(1);
    expect(value("lisa_queue_depth", { kind: "runs" })).toBe(0);
    expect(value("lisa_sessions_total", { provider: "claude", outcome: "succeeded" })).toBe(1);
    expect(value("lisa_agent_cost_usd_total", { provider: "claude" })).toBeCloseTo(0.01);
    expect(value("lisa_session_duration_seconds_count", { provider: "claude" })).toBe(1);
    expect(value("lisa_gate_duration_seconds_count", { outcome: "passed" })).toBe(1);
    expect(value("lisa_github_requests_total", { method: "POST", status: "201" })).toBeGreaterThan(0);
    expect(value("lisa_webhook_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    // A repository without `setup` leaves the set-up cache alone.
    expect(value("lisa_setup_cache_bytes")).toBe(0);
  });

  it("says the worker is stopped once Lisa stops taking work", async () => {
    const agent = createFakeClaude([]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary });
    await env.lisa.worker.stop();
    const health = await fetch(`${origin(env)}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: "stopped" });
  });

  it("serves them on an address of their own when told to, and not beside the webhooks any more", async () => {
    const agent = createFakeClaude([]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary, metricsAddress: { host: "127.0.0.1", port: 0 } });
    const address = env.lisa.metricsAddress();
    expect(address).toMatchObject({ address: "127.0.0.1" });
    const apart = `http://127.0.0.1:${address?.port}`;
    expect((await fetch(`${apart}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${apart}/metrics`)).text()).toContain("lisa_forged_commands_total 0");
    expect((await fetch(`${apart}/api/github/webhooks`, { method: "POST", body: "{}" })).status).toBe(404);
    for (const endpoint of ["/healthz", "/metrics"]) {
      const beside = await fetch(`${origin(env)}${endpoint}`);
      expect(beside.status).toBe(404);
      expect(await beside.text()).not.toContain("lisa_");
    }
  });
});
