import { describeCommit } from "./describe-commit.ts";
import type { Block } from "./fit-to-limit.ts";
import { plural, shortSha } from "./format.ts";
import type { PackageView } from "./package-view.ts";
import { code, link } from "./untrusted.ts";

const MAX_FILES = 30;
const MAX_HUMAN_COMMITS = 20;

/** The pass's commit range, its size, the files it touched and the human commits it kept. */
export function changeBlocks(view: PackageView): (string | Block)[] {
  const { secrets } = view;
  if (view.commits.length === 0 && view.files.length === 0) return ["**Changes in this pass:** none", ""];
  const added = view.files.reduce((sum, file) => sum + file.added, 0);
  const deleted = view.files.reduce((sum, file) => sum + file.deleted, 0);
  const parts = ["**Changes in this pass**"];
  if (view.range) {
    const compare = link("compare", view.range.compareUrl);
    parts.push(`${shaRange(view.range.from, view.range.to)}${compare ? ` (${compare})` : ""}`);
  }
  parts.push(plural(view.commits.length, "commit"), `+${added} −${deleted} in ${plural(view.files.length, "file")}`);
  const blocks: (string | Block)[] = [parts.join(" · ")];
  for (const file of view.files.slice(0, MAX_FILES)) {
    blocks.push({ text: `- ${code(file.path, { secrets })} (+${file.added} −${file.deleted})`, drop: 3 });
  }
  if (view.files.length > MAX_FILES) blocks.push(`- …and ${plural(view.files.length - MAX_FILES, "more file")}`);
  const human = view.commits.filter((commit) => commit.human);
  if (human.length) {
    blocks.push(`- Human ${human.length === 1 ? "commit" : "commits"} kept:`);
    for (const commit of human.slice(0, MAX_HUMAN_COMMITS)) {
      blocks.push({ text: `  - ${describeCommit(commit, secrets)}`, drop: 2 });
    }
    if (human.length > MAX_HUMAN_COMMITS) blocks.push(`  - …and ${plural(human.length - MAX_HUMAN_COMMITS, "more commit")}`);
  }
  blocks.push("");
  return blocks;
}

/** `` `1a2b3c4..9f8e7d6` `` */
function shaRange(from: string, to: string): string {
  const [a, b] = [shortSha(from), shortSha(to)];
  return a.startsWith("`") && !a.startsWith("``") && b.startsWith("`") && !b.startsWith("``")
    ? `\`${a.slice(1, -1)}..${b.slice(1, -1)}\``
    : `${a}..${b}`;
}
