import type { IncomingMessage, ServerResponse } from "node:http";

/** GitHub caps webhook payloads at 25 MB; anything larger did not come from GitHub. */
export const GITHUB_MAX_PAYLOAD = 25 * 1024 * 1024;

/**
 * Answers a request whose body Lisa will not read: 411 for a body of undeclared length, 413 for
 * one over `limit`, before a byte of it is read, and closes the connection rather than drain the
 * rest. True when it answered. The signature check needs the whole body, so without this an
 * unauthenticated POST of 200 MiB was read into memory (2.2 GiB of RSS) before being refused.
 */
export function refuseUnboundedBody(request: IncomingMessage, response: ServerResponse, limit: number): boolean {
  if (request.method === "GET" || request.method === "HEAD") return false;
  const declared = request.headers["content-length"];
  const chunked = request.headers["transfer-encoding"] !== undefined;
  const status = declared === undefined ? (chunked ? 411 : 0) : Number(declared) > limit ? 413 : 0;
  if (status === 0) return false;
  response.writeHead(status, { "content-type": "text/plain", connection: "close" });
  response.end(status === 411 ? "A body needs a Content-Length.\n" : `A body may be at most ${limit} bytes.\n`);
  return true;
}
