import { existsSync, realpathSync } from "node:fs";
import { cp, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SandboxError } from "../errors.ts";
import { type DeadlineResult, type RunWithDeadlineOptions, runWithDeadline } from "../process/run-with-deadline.ts";
import { bwrapArgs, EGRESS_BRIDGE, EGRESS_SOCKET } from "./bwrap-args.ts";
import { bwrapPath, checkSandbox } from "./check-sandbox.ts";
import { addTally, type EgressProxy, startEgressProxy } from "./egress-proxy.ts";
import { resolveExecutable } from "./resolve-executable.ts";
import { DEFAULT_SANDBOX, type Egress, type Sandbox } from "./sandbox-settings.ts";

/** The bridge script, on the host; shown read-only in the sandbox. */
const BRIDGE = fileURLToPath(new URL("./egress-bridge.mjs", import.meta.url));

/** Where the bridge listens on the sandbox's own loopback; the proxy variables point here. */
export const EGRESS_PORT = 3128;

/** Proxy variables the host may have set; inside an isolated sandbox only Lisa's proxy leads anywhere. */
const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"].flatMap((name) => [name, name.toLowerCase()]);

/** The environment of a sandboxed process: the host's proxies replaced by Lisa's (or none), nothing bypassing it. */
function proxyEnv(env: Record<string, string>, egress: Egress | undefined): Record<string, string> {
  const result = Object.fromEntries(Object.entries(env).filter(([name]) => !PROXY_VARIABLES.includes(name)));
  if (!egress) return result;
  const url = `http://127.0.0.1:${EGRESS_PORT}`;
  return { ...result, HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url };
}

/**
 * The base URL a sandboxed CLI reaches the model APIs of `capability` at: the bridge, on the
 * sandbox's own loopback, asked directly or as its proxy (a CLI that proxies loopback too).
 */
export function modelEndpointUrl(capability: string): string {
  return `http://127.0.0.1:${EGRESS_PORT}/${capability}`;
}

/** Starts the egress proxy of one sandboxed process, on a unix socket in a fresh folder. */
async function startProxy(egress: Egress): Promise<{ proxy: EgressProxy; dir: string; socket: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "lisa-egress-"));
  const socket = path.join(dir, "proxy.sock");
  const { rules, onRefused, onAllowed, models } = egress;
  const proxy = await startEgressProxy({ socketPath: socket, rules, onRefused, onAllowed, models, bridgePort: EGRESS_PORT });
  return { proxy, dir, socket };
}

export interface RunSandboxedOptions extends Omit<RunWithDeadlineOptions, "fds"> {
  /** How the process is contained and what it may reach; bubblewrap with only `cwd` writable when omitted. */
  sandbox?: Sandbox | undefined;
}

/** The result of a command that is not there, shaped like one that could not be spawned. */
function notFound(command: string): DeadlineResult {
  const spawnError: NodeJS.ErrnoException = Object.assign(new Error(`spawn ${command} ENOENT`), { code: "ENOENT" });
  return { stdout: "", stderr: "", all: "", exitCode: undefined, ending: "spawn_failed", spawnError, durationMs: 0 };
}

/** A fresh HOME outside Lisa's data directory, holding a copy of the template when there is one, and `files` over it. */
async function createHome(template: string | undefined, files: Record<string, string> = {}): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), "lisa-home-"));
  try {
    if (template) await cp(template, home, { recursive: true });
    const root = await realpath(home);
    for (const [relative, content] of Object.entries(files)) {
      const file = path.join(home, relative);
      // A link the template holds must not carry the write, or a folder made for it, out of the home.
      let existing = path.dirname(file);
      while (!existsSync(existing)) existing = path.dirname(existing);
      const folder = await realpath(existing);
      if (folder !== root && !folder.startsWith(`${root}${path.sep}`))
        throw new SandboxError(`Lisa will not write ${relative} outside the sandbox's home: LISA_AGENT_HOME links elsewhere.`);
      await mkdir(path.dirname(file), { recursive: true });
      await rm(file, { force: true });
      await writeFile(file, content, { mode: 0o600, flag: "wx" });
    }
    return home;
  } catch (error) {
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Runs `command` (looked up on the PATH of `options.env`) under `runWithDeadline`, inside a
 * bubblewrap sandbox unless the sandbox is off. Sandboxed, it sees the system's programs, its own
 * install folder and Node's read-only, its working directory and the scope's folders, a private
 * /tmp, and a throwaway HOME; it runs in its own PID namespace, so killing the sandbox at the end
 * or at a deadline ends every process it started, `setsid` ones included.
 * @throws SandboxError when the sandbox is on but cannot start on this host
 */
export async function runSandboxed(
  command: string,
  args: readonly string[],
  options: RunSandboxedOptions,
): Promise<DeadlineResult> {
  const sandbox = options.sandbox ?? DEFAULT_SANDBOX;
  const executable = resolveExecutable(command, options.env.PATH, options.cwd);
  if (!executable) return notFound(command);
  // No PID namespace to end what the command leaves running: the tagged sweep does it instead.
  if (sandbox.mode === "off") return runWithDeadline(executable, args, { ...options, sweep: true });

  const problem = await checkSandbox(sandbox);
  const bwrap = bwrapPath();
  if (problem || !bwrap) throw new SandboxError(problem ?? "Lisa cannot start its sandbox for agents: `bwrap` is not on PATH.");
  const shared = sandbox.network === "shared";
  const egress = shared ? undefined : sandbox.egress;
  const home = await createHome(sandbox.homeTemplate, sandbox.homeFiles);
  let outlet: Awaited<ReturnType<typeof startProxy>> | undefined;
  try {
    outlet = egress ? await startProxy(egress) : undefined;
    const env: Record<string, string> = {
      ...(shared ? options.env : proxyEnv(options.env, egress)),
      HOME: home,
      TMPDIR: "/tmp",
    };
    const files = [env.NODE_EXTRA_CA_CERTS, env.SSL_CERT_FILE].filter((file): file is string => !!file && path.isAbsolute(file));
    const plan = {
      cwd: options.cwd,
      home,
      executable,
      scope: sandbox,
      searchPath: env.PATH,
      files,
      network: shared ? ("shared" as const) : ("isolated" as const),
      egress: outlet ? { socket: outlet.socket, bridge: BRIDGE } : undefined,
    };
    // The bridge runs first, with the Node Lisa runs on (the sandbox shows it), and then the command.
    const command = outlet
      ? [realpathSync(process.execPath), EGRESS_BRIDGE, EGRESS_SOCKET, String(EGRESS_PORT), realpathSync(executable)]
      : [realpathSync(executable)];
    return await runWithDeadline(bwrap, [...bwrapArgs(plan), "--", ...command, ...args], { ...options, env });
  } finally {
    // The proxy first: its count of refusals must reach the run even if a folder cannot be removed.
    if (outlet) {
      await outlet.proxy.close();
      if (egress?.tally) addTally(egress.tally, outlet.proxy.tally);
      await rm(outlet.dir, { recursive: true, force: true });
    }
    await rm(home, { recursive: true, force: true });
  }
}
