import { createHash } from "node:crypto";
import type { RouteRequest, RouteResponse } from "./router.ts";

/** GitHub's page size when a request names none, for most lists. */
const DEFAULT_PER_PAGE = 30;
/** GitHub's largest page: `per_page` above it is cut to it. */
const MAX_PER_PAGE = 100;

/**
 * One page of `items` as GitHub pages a list: `per_page` (at most 100) and `page` from the query,
 * `Link` headers to the next, last, first and previous pages, and an ETag. `wrap` shapes a page whose list sits
 * in an object (`{ total_count, check_runs }`); without it the page is the array itself.
 */
export function paginate(
  items: readonly unknown[],
  request: RouteRequest,
  base: string,
  { wrap, defaultPerPage = DEFAULT_PER_PAGE }: { wrap?: (page: unknown[]) => unknown; defaultPerPage?: number } = {},
): RouteResponse {
  const asked = Number.parseInt(request.query.get("per_page") ?? "", 10) || defaultPerPage;
  const perPage = Math.min(Math.max(asked, 1), MAX_PER_PAGE);
  const page = Math.max(Number.parseInt(request.query.get("page") ?? "1", 10) || 1, 1);
  const lastPage = Math.max(Math.ceil(items.length / perPage), 1);
  const pageUrl = (n: number) => {
    const query = new URLSearchParams(request.query);
    query.set("per_page", String(perPage));
    query.set("page", String(n));
    return `<${base}${request.path}?${query}>`;
  };
  const links = [
    ...(page < lastPage ? [`${pageUrl(page + 1)}; rel="next"`, `${pageUrl(lastPage)}; rel="last"`] : []),
    ...(page > 1 ? [`${pageUrl(1)}; rel="first"`, `${pageUrl(Math.min(page - 1, lastPage))}; rel="prev"`] : []),
  ];
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const body = wrap ? wrap(slice) : slice;
  const link = links.join(", ");
  // GitHub's ETag changes with the page (its links included); a request holding it gets a 304, free of rate limit.
  const etag = `W/"${createHash("sha256").update(JSON.stringify(body)).update(link).digest("hex").slice(0, 40)}"`;
  if (request.headers["if-none-match"] === etag) return { status: 304, headers: { etag } };
  return { status: 200, body, headers: { etag, ...(link ? { link } : {}) } };
}
