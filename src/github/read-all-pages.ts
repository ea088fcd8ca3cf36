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
 * page has more than one field), so every list Lisa reads goes through here.
 */
export async function* pagesOf<R extends ListRequest>(
  octokit: Octokit,
  request: R,
  params: ParamsOf<R>,
  cache?: PageCache,
): AsyncGenerator<PageOf<R>> {
  if (cache) {
    yield* cachedPagesOf(octokit, request.endpoint({ per_page: PER_PAGE, ...params }).url, cache) as AsyncGenerator<PageOf<R>>;
    return;
  }
  let response = await request({ per_page: PER_PAGE, ...params });
  yield response.data as PageOf<R>;
  const seen = new Set<string>();
  for (let next = nextPage(response.headers.link); next && !seen.has(next); next = nextPage(response.headers.link)) {
    // A link that comes back again would page forever: GitHub never sends one, a broken proxy might.
    seen.add(next);
    response = (await octokit.request({ method: "GET", url: next })) as unknown as Awaited<ReturnType<R>>;
    yield response.data as PageOf<R>;
  }
}

/**
 * The pages of a polled list, each asked for with the ETag of its last answer: a 304 gives the page
 * kept, and the `Link` kept with it. Each page is checked on its own ETag, so a list that changed
 * on page 2 only is still read anew there; and the lists Lisa polls carry their `total_count` on
 * every page, so a list that grew or shrank changes every page's ETag, and its links with it.
 */
async function* cachedPagesOf(octokit: Octokit, first: string, cache: PageCache): AsyncGenerator<unknown> {
  const seen = new Set<string>();
  for (let url: string | undefined = first; url && !seen.has(url); ) {
    seen.add(url);
    const kept = cache.get(url);
    const page = url;
    const answer = await ifChanged(kept?.etag, (headers) => octokit.request({ method: "GET", url: page, headers }));
    // "unchanged" comes only for an ETag sent, that is for a page kept.
    const fresh: CachedPage =
      answer === "unchanged"
        ? (kept as CachedPage)
        : { etag: answer.headers.etag ?? "", data: answer.data, link: answer.headers.link };
    if (answer !== "unchanged" && fresh.etag) cache.set(url, fresh);
    yield fresh.data;
    url = nextPage(fresh.link);
  }
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
