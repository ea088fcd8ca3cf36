/** `lisa/<issue>-<slug>`: the branch a run works on, readable and valid as a git ref. */
export function branchName(issueNumber: number, title: string): string {
  const slug = title
    .normalize("NFKD")
    // Drop the accents NFKD split off, so "café" reads "cafe" rather than "cafe-".
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return `lisa/${issueNumber}${slug ? `-${slug}` : ""}`;
}
