import { connect } from "node:net";
import { parseOperatorHosts } from "../../sandbox/egress-rules.ts";
import type { Check } from "./check.ts";

/** How long each operator host may take to accept a connection. */
const WAIT_MS = 5_000;

function tryConnect(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (problem: string | undefined) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(WAIT_MS, () => done(`no answer within ${WAIT_MS / 1000}s`));
    socket.once("connect", () => done(undefined));
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

/** Each host of `LISA_EGRESS_ALLOW`, and whether Lisa (whose proxy connects for the sandbox) reaches it. */
export async function egressAllowChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  if (!env.LISA_EGRESS_ALLOW?.trim()) return [];
  const parsed = parseOperatorHosts(env.LISA_EGRESS_ALLOW);
  // A malformed value is the environment check's to report.
  if ("bad" in parsed) return [];
  return Promise.all(
    parsed.rules.map(async ({ host, port }): Promise<Check> => {
      const problem = await tryConnect(host, port);
      const name = `egress ${host.includes(":") ? `[${host}]` : host}:${port}`;
      return problem
        ? {
            name,
            status: "warn",
            detail: `LISA_EGRESS_ALLOW names it; Lisa cannot connect (${problem})`,
            fix: "Check the host and port, and that this machine may reach them; set-up that installs from it will fail.",
          }
        : { name, status: "ok", detail: "LISA_EGRESS_ALLOW names it; it answers, at a private address too" };
    }),
  );
}
