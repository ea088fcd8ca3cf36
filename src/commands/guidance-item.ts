import type { ReviewComment } from "../github/github-port.ts";
import { sanitizeMarkdown } from "../markdown/sanitize-markdown.ts";
import type { NewGuidance } from "../store/store.ts";
import type { Scene } from "./gesture-scene.ts";

/** Where in a pull request's diff a piece of guidance was said, and by whom when not the gesture's sender. */
interface GuidancePlace {
  author?: string;
  url?: string | null;
  githubId?: number;
  path?: string;
  line?: number | null;
  diffHunk?: string;
  outdated?: boolean;
}

/** One piece of guidance for the next pass, as the store keeps it: sanitized, and bounded so the prompt stays readable. */
export function guidanceItem(scene: Scene, source: NewGuidance["source"], text: string, extra: GuidancePlace): NewGuidance {
  const { gesture } = scene;
  return {
    delivery_id: scene.deliveryId,
    source,
    owner: gesture.isPullRequest ? gesture.owner : null,
    repo: gesture.isPullRequest ? gesture.repo : null,
    pr_number: gesture.isPullRequest ? gesture.number : null,
    author: extra.author ?? gesture.sender,
    url: extra.url ?? null,
    // One row per delivery and comment: a redelivered webhook adds nothing.
    github_id: extra.githubId ?? null,
    path: extra.path ?? null,
    line: extra.line ?? null,
    diff_hunk: extra.diffHunk ? extra.diffHunk.slice(-2_000) : null,
    outdated: extra.outdated ? 1 : 0,
    body: sanitizeMarkdown(text, { maxLength: 8_000 }),
  };
}

/** An inline review comment as guidance: the agent sees the line it is about, or that the line has moved on. */
export function inlineGuidance(scene: Scene, comment: ReviewComment, author?: string): NewGuidance {
  return guidanceItem(scene, "inline", comment.body, {
    author,
    url: comment.url,
    githubId: comment.id,
    path: comment.path,
    line: comment.line ?? comment.originalLine,
    diffHunk: comment.diffHunk,
    outdated: comment.line === null,
  });
}
