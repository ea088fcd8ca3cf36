/** One page of a list as GitHub last answered it: kept to be asked for again with `If-None-Match`. */
export interface CachedPage {
  etag: string;
  data: unknown;
  /** The page's `Link` header: a 304 answers without one, and the cached page still says what follows it. */
  link: string | undefined;
}

/** The pages of an installation's polled lists, by URL, the least recently used dropped past `max`. */
export interface PageCache {
  get(url: string): CachedPage | undefined;
  set(url: string, page: CachedPage): void;
}

/** Enough for every head a worker polls at once, each with its three lists of a few pages. */
const MAX_PAGES = 500;

export function pageCache(max = MAX_PAGES): PageCache {
  const pages = new Map<string, CachedPage>();
  return {
    get(url) {
      const page = pages.get(url);
      if (page) {
        pages.delete(url);
        pages.set(url, page);
      }
      return page;
    },
    set(url, page) {
      pages.delete(url);
      pages.set(url, page);
      for (const oldest of pages.keys()) {
        if (pages.size <= max) break;
        pages.delete(oldest);
      }
    },
  };
}
