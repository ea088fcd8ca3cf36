import { type ProviderName, providers } from "../../providers/registry.ts";
import { agentChecks } from "./agent-checks.ts";
import { agentHomeCheck } from "./agent-home-check.ts";
import { appChecks } from "./app-checks.ts";
import type { Check } from "./check.ts";
import { egressAllowChecks } from "./egress-allow-checks.ts";
import { environmentChecks } from "./environment-checks.ts";
import { liveAppChecks } from "./live-app-checks.ts";
import { runtimeChecks } from "./runtime-checks.ts";
import { toolchainChecks } from "./toolchain-checks.ts";

/**
 * `lisa doctor`: checks what a deployment needs before the first issue is labeled (Node.js, git,
 * the sandbox, the data directory, the environment, the App's credentials and webhook secret, each
 * agent CLI and its credentials, no credential in the agents' home template, the toolchains set-up
 * and gates find, each host of LISA_EGRESS_ALLOW) and prints a table with a fix for each problem. `--live` also asks
 * GitHub, as the App, for itself and its installations. Exit status 0 when nothing failed
 * (warnings allowed), 1 otherwise.
 */
export async function doctor(args: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const checks: Check[] = [...(await runtimeChecks()), ...(await environmentChecks(env))];
  const app = await appChecks(env);
  checks.push(...app);
  if (args.includes("--live")) {
    checks.push(
      ...(app.some((check) => check.status === "FAIL")
        ? [
            {
              name: "App on GitHub",
              status: "FAIL" as const,
              detail: "not asked: the App's settings above are incomplete",
              fix: "Fix them first.",
            },
          ]
        : await liveAppChecks(env)),
    );
  }
  for (const name of Object.keys(providers) as ProviderName[]) checks.push(...(await agentChecks(name, env)));
  checks.push(...agentHomeCheck(env));
  checks.push(...(await toolchainChecks(env)), ...(await egressAllowChecks(env)));

  printTable(checks);
  return checks.some((check) => check.status === "FAIL") ? 1 : 0;
}

function printTable(checks: Check[]): void {
  const width = Math.max(...checks.map((check) => check.name.length));
  for (const check of checks) {
    process.stdout.write(`${check.status.padEnd(4)}  ${check.name.padEnd(width)}  ${check.detail}\n`);
    if (check.fix && check.status !== "ok") process.stdout.write(`${" ".repeat(6 + width)}  fix: ${check.fix}\n`);
  }
  const failed = checks.filter((check) => check.status === "FAIL").length;
  const warned = checks.filter((check) => check.status === "warn").length;
  process.stdout.write(`\n${failed} failed, ${warned} warning(s), ${checks.length - failed - warned} ok\n`);
}
