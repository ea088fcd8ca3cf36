const MAX_SLUG = 40;

/** Where a branch's issue lives, and the repository the branch is in. */
interface Place {
  owner: string;
  repo: string;
}

/**
 * The branch a run works on in `target`, readable and valid as a git ref: `lisa/<issue>-<slug>` in
 * the issue's own repository. In another repository it names the issue's repository too
 * (`lisa/api-1-…`, and its owner when that differs): issues `acme/api#1` and `acme/web#1` both
 * planned into `acme/web` must not share a branch, or both runs deliver into one pull request.
 */
export function branchName(issueNumber: number, title: string, issue?: Place, target?: Place): string {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const origin =
    !issue || !target || (same(issue.owner, target.owner) && same(issue.repo, target.repo))
      ? ""
      : `${same(issue.owner, target.owner) ? "" : `${refPart(issue.owner)}-`}${refPart(issue.repo)}-`;
  let slug = title
    .normalize("NFKD")
    // Drop the accents NFKD split off, so "café" reads "cafe" rather than "cafe-".
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug.length > MAX_SLUG) {
    // Cut a long title at a word boundary, or hard when one word is that long.
    const boundary = slug.slice(0, MAX_SLUG + 1).lastIndexOf("-");
    slug = boundary > 0 ? slug.slice(0, boundary) : slug.slice(0, MAX_SLUG);
  }
  return `lisa/${origin}${issueNumber}${slug ? `-${slug}` : ""}`;
}

/** A repository or owner name as part of a ref: lowercase, no dots (`..` and `.lock` are not allowed in refs). */
const refPart = (name: string) => name.toLowerCase().replace(/[^a-z0-9_-]+/g, "-");
