import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";

/** A repository path as git's smart HTTP asks for it: `/<owner>/<name>.git/<service path>`. */
const GIT_PATH = /^\/[\w.-]+\/[\w.-]+\.git\/(?:info\/refs|git-upload-pack|git-receive-pack)$/;

/** Whether the emulator's git server answers `pathname` (rather than the REST API). */
export function isGitPath(pathname: string): boolean {
  return GIT_PATH.test(pathname);
}

/**
 * Serves the bare repositories under `reposRoot` over git's smart HTTP protocol, through
 * `git http-backend` as a CGI, the way GitHub serves `https://github.com/<owner>/<name>.git`.
 * Stricter than GitHub: every request, a clone of a public repository too, needs the Basic
 * credentials `x-access-token:<token>` of an installation token that `tokenValid` accepts (one
 * the emulator handed out and that has not expired). Without them git is told 401, and with
 * GIT_TERMINAL_PROMPT=0 it fails as it would against github.com with a stale token.
 * A push whose token `refusesWorkflows` is refused, as GitHub refuses an App without the
 * `workflows` permission, when a commit it adds changes a file under `.github/workflows/`.
 */
export function serveGit(
  request: IncomingMessage,
  response: ServerResponse,
  options: {
    reposRoot: string;
    tokenValid: (token: string) => boolean;
    refusesWorkflows?: (token: string) => boolean;
    pushed?: (pathname: string) => Promise<void>;
  },
): void {
  const url = new URL(request.url ?? "/", "http://emulator");
  const token = basicPassword(request.headers.authorization);
  if (!options.tokenValid(token)) {
    request.resume();
    response.writeHead(401, { "www-authenticate": 'Basic realm="GitHub"', "content-type": "text/plain" });
    response.end("Invalid username or token. Password authentication is not supported for Git operations.\n");
    return;
  }
  const backend = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      GIT_PROJECT_ROOT: options.reposRoot,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      // Setting the user is what lets http-backend accept a push.
      REMOTE_USER: "x-access-token",
      REMOTE_ADDR: request.socket.remoteAddress ?? "127.0.0.1",
      REQUEST_METHOD: request.method ?? "GET",
      PATH_INFO: url.pathname,
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: request.headers["content-type"] ?? "",
      ...(request.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: request.headers["content-encoding"] } : {}),
      ...(request.headers["git-protocol"] ? { GIT_PROTOCOL: String(request.headers["git-protocol"]) } : {}),
      ...(url.pathname.endsWith("/git-receive-pack") && options.refusesWorkflows?.(token) ? workflowCheck() : {}),
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  request.pipe(backend.stdin);
  // git closes its stdin early on a refused request; the rest of the body has nowhere to go.
  backend.stdin.on("error", () => {});
  const stderr: Buffer[] = [];
  backend.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  let head = Buffer.alloc(0);
  let headersSent = false;
  backend.stdout.on("data", (chunk: Buffer) => {
    if (headersSent) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    const { status, headers } = cgiHeaders(head.subarray(0, end).toString("latin1"));
    response.writeHead(status, headers);
    headersSent = true;
    response.write(head.subarray(end + 4));
  });
  backend.on("close", async (code) => {
    if (!headersSent) {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end(`git http-backend exited ${code}: ${Buffer.concat(stderr).toString()}`);
      return;
    }
    // What GitHub does at push time (the CI's check suites) is there before the push returns.
    if (url.pathname.endsWith("/git-receive-pack")) await options.pushed?.(url.pathname).catch(() => undefined);
    response.end();
  });
}

/**
 * receive-pack's settings that hand every branch update to the repository's proc-receive hook, which
 * refuses workflow changes (git-repos.ts installs it; without this setting git never runs it). The
 * repository's other hooks stay in force: tests install their own.
 */
function workflowCheck(): Record<string, string> {
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "receive.procReceiveRefs",
    GIT_CONFIG_VALUE_0: "refs/heads/",
    // The node running the emulator, whatever PATH holds.
    EMULATOR_NODE: process.execPath,
  };
}

/** The password of HTTP Basic credentials, or "" when there are none. */
function basicPassword(authorization: string | undefined): string {
  const [scheme, encoded = ""] = (authorization ?? "").split(" ");
  if (scheme?.toLowerCase() !== "basic") return "";
  const decoded = Buffer.from(encoded, "base64").toString();
  return decoded.slice(decoded.indexOf(":") + 1);
}

/** A CGI response's status (from `Status:`, 200 without one) and its other headers. */
function cgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "status") status = Number.parseInt(value, 10) || 200;
    else headers[name] = value;
  }
  return { status, headers };
}
