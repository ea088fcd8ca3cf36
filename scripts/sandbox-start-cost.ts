// `node scripts/sandbox-start-cost.ts [reps]`: what starting a sandbox costs, by how its network is
// set up, as the median wall time of `true` run through runSandboxed (reps each, default 30,
// interleaved so load on the machine falls on all alike). The figures are in docs/security-model.md.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runSandboxed } from "../src/sandbox/run-sandboxed.ts";
import type { Sandbox } from "../src/sandbox/sandbox-settings.ts";

const reps = Number(process.argv[2] ?? 30);
const variants: Record<string, Sandbox> = {
  "no sandbox (LISA_SANDBOX=off)": { mode: "off" },
  "sandbox, host network (before issue 20)": { mode: "bwrap", network: "shared" },
  "sandbox, own network, no proxy (gates)": { mode: "bwrap" },
  "sandbox, own network, bridge and proxy (agents)": { mode: "bwrap", egress: { rules: [] } },
};
const cwd = mkdtempSync(path.join(tmpdir(), "lisa-cost-"));
const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let rep = 0; rep < reps + 1; rep++) {
  for (const [name, sandbox] of Object.entries(variants)) {
    const started = process.hrtime.bigint();
    const result = await runSandboxed("true", [], { cwd, env: { PATH: "/usr/bin:/bin" }, timeoutMs: 10_000, sandbox });
    if (result.exitCode !== 0) throw new Error(`${name}: ${result.stderr || result.ending}`);
    // The first round warms the sandbox probe and the file cache.
    if (rep > 0) times[name]?.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
for (const [name, values] of Object.entries(times)) console.log(`${median(values).toFixed(1).padStart(7)} ms  ${name}`);
