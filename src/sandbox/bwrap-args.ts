import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { SandboxScope } from "./sandbox-settings.ts";

/** Files of `/etc` programs need to resolve names, verify TLS, load libraries and tell the time; nothing else of it. */
const ETC_FILES = [
  "resolv.conf",
  "hosts",
  "host.conf",
  "gai.conf",
  "nsswitch.conf",
  "services",
  "protocols",
  "passwd",
  "group",
  "localtime",
  "timezone",
  "ssl",
  "ca-certificates",
  "ca-certificates.conf",
  "pki",
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "os-release",
];

/** Top-level folders that are the system's programs and libraries (or, on merged-/usr systems, links into /usr). */
const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** What git (and Claude Code's `--worktree`) write in a mirror; the rest of it, config included, stays read-only. */
const MIRROR_WRITABLE = ["objects", "refs", "logs", "worktrees", ".claude"];

export interface BwrapPlan {
  /** Working directory, read-write unless the scope says `readOnlyCwd`. */
  cwd: string;
  /** The throwaway HOME, read-write. */
  home: string;
  /** The executable the sandbox runs, as found on the host. */
  executable: string;
  scope: SandboxScope;
  /** PATH inside the sandbox: its entries that lead into what the sandbox shows are recreated, links included. */
  searchPath: string | undefined;
  /** Single files to show read-only, e.g. the CA bundle `NODE_EXTRA_CA_CERTS` names. */
  files?: string[];
  /**
   * `isolated` (the default): a network namespace of its own, with only its own loopback. `shared`:
   * the host's network, only for the control runs of the tests that prove the isolation.
   */
  network?: "isolated" | "shared";
  /** Lisa's egress proxy socket and the bridge to it, shown at `EGRESS_SOCKET` and `EGRESS_BRIDGE`. */
  egress?: { socket: string; bridge: string } | undefined;
}

/** Where the sandbox sees the egress proxy's unix socket and the bridge script. */
export const EGRESS_SOCKET = "/run/lisa/egress.sock";
export const EGRESS_BRIDGE = "/run/lisa/egress-bridge.mjs";

const isInside = (child: string, parent: string) =>
  child === parent || child.startsWith(parent.endsWith("/") ? parent : `${parent}/`);

function lstatOrUndefined(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Where a program is installed, to show it read-only: the outermost `node_modules` holding it (an
 * npm package needs its hoisted dependencies), the prefix of a `bin/` folder, or its own folder.
 * Never a folder holding Lisa's working directory or home, which hold Lisa's secrets.
 */
export function installRoot(realFile: string): string {
  const parts = realFile.split(path.sep);
  const modules = parts.indexOf("node_modules");
  const dir = path.dirname(realFile);
  const candidates = [
    ...(modules > 0 ? [parts.slice(0, modules + 1).join(path.sep)] : []),
    ...(path.basename(dir) === "bin" ? [path.dirname(dir)] : []),
    dir,
  ];
  const private_ = [process.cwd(), homedir()].map((p) => realpathOrSelf(p));
  return candidates.find((c) => c !== "/" && !private_.some((p) => isInside(p, c))) ?? realFile;
}

function realpathOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The symbolic links met while resolving `file`, in order, with what each points to. */
export function linksOnPath(file: string): { location: string; target: string }[] {
  const links: { location: string; target: string }[] = [];
  let pending = file.split("/").filter(Boolean);
  let current = "/";
  // A loop of links ends here the way the kernel ends it (ELOOP).
  for (let hops = 0; pending.length > 0 && hops < 40; ) {
    const next = path.join(current, pending.shift() ?? "");
    const stat = lstatOrUndefined(next);
    if (!stat) break;
    if (!stat.isSymbolicLink()) {
      current = next;
      continue;
    }
    const target = readlinkSync(next);
    links.push({ location: next, target });
    pending = [...path.resolve(path.dirname(next), target).split("/").filter(Boolean), ...pending];
    current = "/";
    hops++;
  }
  return links;
}

/** The admin folder of the linked worktree at `dir` (from its `.git` file), when it lies in one of `mirrors`. */
function worktreeAdminDir(dir: string, mirrors: readonly string[]): string | undefined {
  const dotGit = path.join(dir, ".git");
  const gitdir = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1];
  if (!gitdir) return undefined;
  const admin = realpathOrSelf(path.resolve(dir, gitdir.trim()));
  return mirrors.some((mirror) => isInside(admin, path.join(mirror, "worktrees"))) ? admin : undefined;
}

/**
 * The bubblewrap arguments (before `--`) that show a process only the system's programs, its
 * tools, its scope and a private /tmp, in new user, PID, IPC, UTS and network namespaces, with no
 * capabilities, killed with its parent. Creates the mirror folders git writes, so they can be mounted.
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    // Its own network: loopback only; the egress proxy's socket is the one way out.
    ...(plan.network === "shared" ? [] : ["--unshare-net"]),
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
  ];
  // Host folders shown inside, to know which links along PATH lead somewhere and which exist already.
  const shown: string[] = [];
  // Links made inside the sandbox, by where they are.
  const made = new Set<string>();
  const bind = (flag: "--ro-bind" | "--bind", dir: string) => {
    args.push(flag, dir, dir);
    shown.push(dir);
  };

  bind("--ro-bind", "/usr");
  for (const dir of SYSTEM_DIRS) {
    const stat = lstatOrUndefined(dir);
    if (stat?.isSymbolicLink()) {
      args.push("--symlink", readlinkSync(dir), dir);
      made.add(dir);
    } else if (stat?.isDirectory()) bind("--ro-bind", dir);
  }
  for (const name of ETC_FILES) args.push("--ro-bind-try", `/etc/${name}`, `/etc/${name}`);
  // A fresh /proc of the new PID namespace shows none of Lisa's processes; its sysctls stay read-only.
  args.push("--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev", "--tmpfs", "/tmp");

  const tools = [installRoot(realpathSync(process.execPath)), installRoot(realpathSync(plan.executable))];
  for (const root of new Set(tools)) if (!shown.some((dir) => isInside(root, dir))) bind("--ro-bind", root);
  for (const file of plan.files ?? []) if (existsSync(file) && statSync(file).isFile()) bind("--ro-bind", realpathSync(file));

  const { scope } = plan;
  for (const dir of scope.readOnly ?? []) bind("--ro-bind", realpathSync(dir));
  const mirrors = (scope.mirrors ?? []).map((mirror) => realpathSync(mirror));
  for (const mirror of mirrors) {
    bind("--ro-bind", mirror);
    for (const sub of MIRROR_WRITABLE) {
      mkdirSync(path.join(mirror, sub), { recursive: true });
      args.push("--bind", path.join(mirror, sub), path.join(mirror, sub));
    }
    // Lisa starts worktrees from these; only its own fetch moves them.
    args.push("--ro-bind-try", path.join(mirror, "refs", "remotes"), path.join(mirror, "refs", "remotes"));
  }
  // A judge reads the work it judges: its working directory is shown, never writable.
  if (scope.readOnlyCwd) bind("--ro-bind", realpathSync(plan.cwd));
  const writable = [...(scope.readOnlyCwd ? [] : [plan.cwd]), ...(scope.writable ?? [])].map((dir) => realpathSync(dir));
  for (const dir of writable) bind("--bind", dir);
  // A worktree's `.git` file and its record's pointers decide where Lisa's own git looks afterwards.
  for (const dir of writable) {
    if (!lstatOrUndefined(path.join(dir, ".git"))?.isFile()) continue;
    args.push("--ro-bind", path.join(dir, ".git"), path.join(dir, ".git"));
    const admin = worktreeAdminDir(dir, mirrors);
    if (!admin) continue;
    for (const pointer of ["commondir", "gitdir"])
      args.push("--ro-bind-try", path.join(admin, pointer), path.join(admin, pointer));
  }
  bind("--bind", realpathSync(plan.home));
  if (plan.egress) args.push("--ro-bind", plan.egress.socket, EGRESS_SOCKET, "--ro-bind", plan.egress.bridge, EGRESS_BRIDGE);

  // PATH entries that reach shown folders through links (e.g. a symlinked node_modules) get the same links.
  for (const entry of (plan.searchPath ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(entry) || !existsSync(entry)) continue;
    if (!shown.some((dir) => isInside(realpathSync(entry), dir))) continue;
    for (const { location, target } of linksOnPath(entry)) {
      if (made.has(location) || shown.some((dir) => isInside(location, dir))) continue;
      made.add(location);
      args.push("--symlink", target, location);
    }
  }
  args.push("--remount-ro", "/", "--chdir", realpathSync(plan.cwd));
  return args;
}
