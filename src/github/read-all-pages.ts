import type { Octokit } from "@octokit/rest";
import { ifChanged } from "./if-changed.ts";
import type { CachedPage, PageCache } from "./page-cache.ts";

/** GitHub's largest page: the fewest requests for a long list. */
export const PER_PAGE = 100;

/** A list request of Octokit's: one page's body and the `Link` header that names the next. */
// biome-ignore lint/suspicious/noExplicitAny: any request method of Octokit's, whatever its parameters
type ListRequest = ((params?: any) => Promise<{ data: unknown; headers: { link?: string } }>) & {
  // biome-ignore lint/suspicious/noExplicitAny: the same method's parameters, for the URL it asks
  endpoint: (params?: any) => { url: string };
};
type ParamsOf<R extends ListRequest> = NonNullable<Parameters<R>[0]>;
type PageOf<R extends ListRequest> = Awaited<ReturnType<R>>["data"];

/**
 * Each page of a list GitHub pages, first to last, following `Link: rel="next"`. Octokit's own
 * paginate guesses where the list sits in a page and guesses wrong for a combined status (whose
 * page has more than one field), so every list Lisa reads goes through here. With `cache` (a list
 * Lisa polls), each page is asked for with the ETag of its last answer, and a 304 gives the page
 * kept with its `Link`. Each page is checked on its own ETag, so a list that changed on page 2 only
 * is still read anew there; and the lists Lisa polls carry their `total_count` on every page, so a
 * list that grew or shrank changes every page's ETag, and its links with it.
 */
export async function* pagesOf<R extends ListRequest>(
  octokit: Octokit,
  request: R,
  params: ParamsOf<R>,
  cache?: PageCache,
): AsyncGenerator<PageOf<R>> {
  // A link that comes back again would page forever: GitHub never sends one, a broken proxy might.
  const seen = new Set<string>();
  for (let url: string | undefined = request.endpoint({ per_page: PER_PAGE, ...params }).url; url && !seen.has(url); ) {
    seen.add(url);
    const page = await readPage(octokit, url, cache);
    yield page.data as PageOf<R>;
    url = nextPage(page.link);
  }
}

/** One page, conditionally when `cache` keeps it: "unchanged" comes only for an ETag sent, that is for a page kept. */
async function readPage(octokit: Octokit, url: string, cache: PageCache | undefined): Promise<Omit<CachedPage, "etag">> {
  const kept = cache?.get(url);
  const answer = await ifChanged(kept?.etag, (headers) => octokit.request({ method: "GET", url, headers }));
  if (answer === "unchanged") return kept as CachedPage;
  const page = { etag: answer.headers.etag ?? "", data: answer.data, link: answer.headers.link };
  if (cache && page.etag) cache.set(url, page);
  return page;
}

/** Every item of a list GitHub pages, read to its last page; `pick` finds the items in a page. With `cache`, read conditionally. */
export async function readAllPages<R extends ListRequest, T>(
  octokit: Octokit,
  request: R,
  params: ParamsOf<R>,
  pick: (page: PageOf<R>) => readonly T[],
  cache?: PageCache,
): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pagesOf(octokit, request, params, cache)) items.push(...pick(page));
  return items;
}

/** The URL of the next page in a `Link` header; undefined on the last page. */
export function nextPage(link: string | undefined): string | undefined {
  return /<([^>]+)>;\s*rel="next"/.exec(link ?? "")?.[1];
}
