import { GITHUB_BODY_LIMIT } from "../markdown/sanitize-markdown.ts";
import { cutMarkdown } from "../reporting/fit-to-limit.ts";

/**
 * Every body Lisa writes fits GitHub's limit: the renderers fit their own, and this cuts anything
 * else (a reply quoting a long command, say) with a note, rather than have GitHub refuse the write.
 */
export const fitBody = (body: string) => cutMarkdown(body, GITHUB_BODY_LIMIT);
