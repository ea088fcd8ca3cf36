import nock from "nock";
import { afterEach, beforeEach, expect } from "vitest";

/**
 * For the port's own unit tests, the one place nock stays: only the routes a test sets up answer,
 * and each test fails on a request no route answered or a route never asked. Requests to loopback
 * are let be (a test may send one to a closed port on purpose).
 */
export function useStrictNock(): void {
  const unmatched: string[] = [];
  const noMatch = (request: { method?: string; path?: string; url?: string }) => {
    const url = request.path ?? request.url ?? "?";
    if (!url.startsWith("http://127.0.0.1:")) unmatched.push(`${request.method} ${url}`);
  };
  beforeEach(() => {
    unmatched.length = 0;
    nock.disableNetConnect();
    nock.emitter.on("no match", noMatch);
  });
  afterEach(() => {
    nock.emitter.removeListener("no match", noMatch);
    const pending = nock.pendingMocks();
    nock.cleanAll();
    nock.enableNetConnect();
    expect(unmatched, "requests no route answered").toEqual([]);
    expect(pending, "routes never asked").toEqual([]);
  });
}
