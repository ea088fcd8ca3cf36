import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

/** What a route handler sees of a request: path parameters already URL-decoded, the body parsed as JSON. */
export interface RouteRequest {
  method: string;
  /** The path as requested, still URL-encoded. */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A handler's answer. A string body is sent as it is; anything else as JSON. */
export interface RouteResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (request: RouteRequest) => RouteResponse | Promise<RouteResponse>;

export interface Route {
  method: string;
  /** `/repos/:owner/:repo/contents/*path`: `:name` matches one segment, `*name` the rest of the path. */
  pattern: string;
  handler: Handler;
}

/** An answer in GitHub's error shape, thrown from anywhere inside a handler. */
export class HttpError extends Error {
  readonly status: number;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, details: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.details = details;
    this.headers = headers;
  }
}

export const notFound = () => new HttpError(404, "Not Found");

/** GitHub's 422 with one entry in `errors`, the shape Octokit's RequestError shows in its message. */
export const validationFailed = (resource: string, error: Record<string, unknown>) =>
  new HttpError(422, "Validation Failed", { errors: [{ resource, ...error }] });

/** A required non-empty string field of a JSON body, or GitHub's 422 naming it. */
export function stringField(body: unknown, field: string, resource: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[field];
  if (typeof value !== "string" || value === "") throw validationFailed(resource, { field, code: "missing_field" });
  return value;
}

export const route = (method: string, pattern: string, handler: Handler): Route => ({ method, pattern, handler });

/** Finds the route for a request and its decoded parameters; `%2F` inside a `*rest` parameter becomes `/`. */
export function matchRoute(routes: Route[], method: string, pathname: string) {
  const segments = pathname.split("/").slice(1);
  for (const candidate of routes) {
    if (candidate.method !== method) continue;
    const params = matchPattern(candidate.pattern, segments);
    if (params) return { route: candidate, params };
  }
  return undefined;
}

function matchPattern(pattern: string, segments: string[]): Record<string, string> | undefined {
  const parts = pattern.split("/").slice(1);
  const params: Record<string, string> = {};
  for (const [index, part] of parts.entries()) {
    if (part.startsWith("*")) {
      params[part.slice(1)] = safeDecode(segments.slice(index).join("/"));
      return params;
    }
    const segment = segments[index];
    if (segment === undefined || segment === "") return undefined;
    if (part.startsWith(":")) params[part.slice(1)] = safeDecode(segment);
    else if (part !== segment) return undefined;
  }
  return parts.length === segments.length ? params : undefined;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Reads and parses a JSON request body; an empty body is `undefined`. */
export async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return parseJsonBody(Buffer.concat(chunks).toString("utf8"));
}

/** A request's body as JSON; undefined when empty, a 400 when not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "Problems parsing JSON");
  }
}

/** An answer as it leaves: every one carries a request id, which Octokit quotes in its errors and logs. */
function onTheWire({ status, body, headers = {} }: RouteResponse): {
  status: number;
  headers: Record<string, string>;
  text?: string;
} {
  const id = { "x-github-request-id": randomBytes(8).toString("hex").toUpperCase() };
  if (body === undefined) return { status, headers: { ...id, ...headers } };
  const isText = typeof body === "string";
  const type = { "content-type": isText ? "text/plain; charset=utf-8" : "application/json; charset=utf-8" };
  return { status, headers: { ...type, ...id, ...headers }, text: isText ? body : JSON.stringify(body) };
}

/** Sends an answer over HTTP. */
export function send(response: ServerResponse, answer: RouteResponse): void {
  const { status, headers, text } = onTheWire(answer);
  response.writeHead(status, headers).end(text);
}

/** The same answer as a fetch Response (the emulator's in-process API). */
export function responseFor(answer: RouteResponse): Response {
  const { status, headers, text } = onTheWire(answer);
  return new Response(text ?? null, { status, headers });
}

export function errorResponse(error: HttpError): RouteResponse {
  return {
    status: error.status,
    body: { message: error.message, ...error.details, documentation_url: "https://docs.github.com/rest" },
    headers: error.headers,
  };
}
