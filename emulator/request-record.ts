// With LISA_RECORD_REQUESTS set to a folder, every REST request Lisa sends the emulator (its
// User-Agent begins with Lisa's name; a test's own requests, malformed on purpose, do not) is appended
// there as a JSON line (method, route, status and the body with long strings cut), so that
// scripts/validate-requests.ts can hold a whole suite's requests to GitHub's API descriptions.
import { appendFileSync } from "node:fs";
import path from "node:path";
import { USER_AGENT_PREFIX } from "../src/github/lisa-octokit.ts";

/** One request the emulator received; `route` is null when no route matched (and the answer was 404). */
export interface RecordedRequest {
  method: string;
  /** Path and query, URL-decoded. */
  path: string;
  status: number;
  route: string | null;
  /** When the request came in (`performance.now()`): the spacing of writes as GitHub's socket sees it. */
  arrivedAt: number;
  /** The ETag the client held (`If-None-Match`), when it sent one: was a read conditional? */
  ifNoneMatch?: string;
}

/** One line of the record. */
export interface RecordedExchange {
  method: string;
  route: string | null;
  path: string;
  status: number;
  sent?: unknown;
}

/** Strings cut to their first 80 characters: types and enum values stay, megabytes of bodies do not. */
function cut(value: unknown): unknown {
  if (typeof value === "string") return value.length > 80 ? value.slice(0, 80) : value;
  if (Array.isArray(value)) return value.map(cut);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]));
  return value;
}

/** Appends one REST request to the record, when one is kept. */
export function recordForValidation(request: RecordedRequest, userAgent: string | undefined, sent: unknown): void {
  const folder = process.env.LISA_RECORD_REQUESTS;
  if (!folder || request.route === "/graphql" || !userAgent?.startsWith(`${USER_AGENT_PREFIX} `)) return;
  const line: RecordedExchange = { method: request.method, route: request.route, path: request.path, status: request.status };
  if (sent !== undefined) line.sent = cut(sent);
  // One file per process: appends from concurrent test workers never interleave within a line.
  appendFileSync(path.join(folder, `requests-${process.pid}.jsonl`), `${JSON.stringify(line)}\n`);
}
