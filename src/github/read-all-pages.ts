import type { Octokit } from "@octokit/rest";

/** GitHub's largest page: the fewest requests for a long list. */
export const PER_PAGE = 100;

/** A list request of Octokit's: one page's body and the `Link` header that names the next. */
// biome-ignore lint/suspicious/noExplicitAny: any request method of Octokit's, whatever its parameters
type ListRequest = (params?: any) => Promise<{ data: unknown; headers: { link?: string } }>;
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
): AsyncGenerator<PageOf<R>> {
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

/** Every item of a list GitHub pages, read to its last page; `pick` finds the items in a page. */
export async function readAllPages<R extends ListRequest, T>(
  octokit: Octokit,
  request: R,
  params: ParamsOf<R>,
  pick: (page: PageOf<R>) => readonly T[],
): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pagesOf(octokit, request, params)) items.push(...pick(page));
  return items;
}

/** The URL of the next page in a `Link` header; undefined on the last page. */
export function nextPage(link: string | undefined): string | undefined {
  return /<([^>]+)>;\s*rel="next"/.exec(link ?? "")?.[1];
}
