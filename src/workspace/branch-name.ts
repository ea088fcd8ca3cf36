const MAX_SLUG = 40;

/** `lisa/<issue>-<slug>`: the branch a run works on, readable and valid as a git ref. */
export function branchName(issueNumber: number, title: string): string {
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
  return `lisa/${issueNumber}${slug ? `-${slug}` : ""}`;
}
