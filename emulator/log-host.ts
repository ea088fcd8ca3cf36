import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EmulatorState } from "./state.ts";

/** How long a job log's download URL is good for: GitHub's expire after a minute. */
const SIGNED_URL_LIFETIME_MS = 60_000;

/** One request the log host received: which log, whether it carried an Authorization header, what it answered. */
export interface LogDownload {
  path: string;
  authorization: boolean;
  status: number;
}

/**
 * Where a job log's 302 points: a host of its own (another port, so another origin), as GitHub's
 * logs are on a storage host. It serves a log to whoever holds a URL it signed, until it expires,
 * and asks for nothing else: a request carrying an Authorization header is refused, as the storage
 * refuses credentials it did not issue, so a client that forwards the API token across the redirect
 * fails here as it would on GitHub.
 */
export function createLogHost(state: EmulatorState, clock: () => number) {
  const key = randomBytes(32);
  const downloads: LogDownload[] = [];
  let base: string | undefined;
  const sign = (path: string, expires: string) => createHmac("sha256", key).update(`${path}\n${expires}`).digest("hex");

  /** The log the request may have, or the status and message the storage refuses it with. */
  function lookUp(request: IncomingMessage, url: URL): string | [number, string] {
    if (request.headers.authorization !== undefined) return [403, "AuthenticationFailed: unexpected credentials"];
    const expires = url.searchParams.get("expires") ?? "";
    const given = Buffer.from(url.searchParams.get("sig") ?? "", "hex");
    const wanted = Buffer.from(sign(url.pathname, expires), "hex");
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return [403, "AuthenticationFailed: signature"];
    if (!(Number(expires) > clock())) return [403, "AuthenticationFailed: the URL has expired"];
    const [, owner = "", name = "", id = ""] = /^\/([\w.-]+)\/([\w.-]+)\/jobs\/(\d+)$/.exec(url.pathname) ?? [];
    return state.findRepo(owner, name)?.checkRuns.get(Number(id))?.log ?? [404, "BlobNotFound"];
  }

  function answer(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? "/", "http://logs");
    const found = lookUp(request, url);
    const [status, text] = typeof found === "string" ? [200, found] : found;
    downloads.push({ path: url.pathname, authorization: request.headers.authorization !== undefined, status });
    response.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(text);
  }
  const server = createServer(answer);

  return {
    async start(address: string): Promise<void> {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, address, () => resolve());
      });
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async stop(): Promise<void> {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
    /** The signed, short-lived URL of job `jobId`'s log in `fullName`. */
    signedUrl(fullName: string, jobId: number): string {
      if (!base) throw new Error("the GitHub emulator has not been started");
      const path = `/${fullName}/jobs/${jobId}`;
      const expires = String(clock() + SIGNED_URL_LIFETIME_MS);
      return `${base}${path}?expires=${expires}&sig=${sign(path, expires)}`;
    },
    /** Every request the log host received, oldest first. */
    downloads: (): LogDownload[] => downloads.map((d) => ({ ...d })),
  };
}

export type LogHost = ReturnType<typeof createLogHost>;
