import { statusOf } from "./github-error.ts";

/**
 * A GET asked with `If-None-Match` when the ETag of an earlier answer is held: GitHub answers 304,
 * which costs no rate limit, when nothing changed ("unchanged"), else the new answer.
 */
export async function ifChanged<T>(
  etag: string | null | undefined,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T | "unchanged"> {
  try {
    return await send(etag ? { "if-none-match": etag } : {});
  } catch (error) {
    if (etag && statusOf(error) === 304) return "unchanged";
    throw error;
  }
}
