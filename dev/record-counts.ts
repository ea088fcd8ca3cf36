// The counts docs/architecture.md keeps (its "Counts" section): a row's JSON column parsed outside
// the store, a compare-and-set whose result is dropped, a state move made outside the store's
// named changes, and the files that write to GitHub. Plain
// text scans of src/, run by scripts/record-counts.ts and test/ci/record-counts.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** The store's JSON columns: what a caller would parse if the store handed out text. */
export const JSON_COLUMNS = [
  "config",
  "plan",
  "gates",
  "gate",
  "manifest",
  "changed_files",
  "human_shas",
  "ci_failure",
  "refinements",
  "open_questions",
  "payload",
  "detail",
] as const;

/**
 * The store's compare-and-set methods and changes: each says whether it applied (a boolean, or the
 * row it moved and undefined when refused), and a caller must look.
 */
export const COMPARE_AND_SET = [
  String.raw`[\w.]*\bsteps\.move`,
  String.raw`[\w.]*\bpasses\.(?:transition|startNext)`,
  String.raw`[\w.]*\bruns\.(?:transition|claim|takeOver|accept|retry)`,
  String.raw`[\w.]*\bsessions\.finish`,
  String.raw`[\w.]*\bredeliveries\.take`,
  String.raw`[\w.]*\batomically`,
  String.raw`this\.transition`,
];

/** The same, as functions: a statement that calls one is `await`ed (a bare name alone is a method's declaration). */
export const COMPARE_AND_SET_FUNCTIONS = String.raw`(?:\w+\.)?(?:advancePass|finishRun|startStep|deliverPlan|dropRunningStep|openGate|refuseStep|finishStep|blockStep|dropStep|blockRun|awaitPlanReview|replanRun|fixBlocked|skipBlocked|proceedWithPlan|abortRun|withdrawRun|reopenRun|failRun|interruptRun|moveStep|movePass|transitionRun)`;

export interface Found {
  file: string;
  line: number;
  text: string;
}

/** Each `.ts` file under `dir` (relative to `root`), with its text. */
export function sourceFiles(root: string, dir = "src"): { file: string; text: string }[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => path.join(dir, file))
    .map((file) => ({ file, text: readFileSync(path.join(root, file), "utf8") }));
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

/** `text` with its comments blanked, line breaks kept, so a match's line number stays true. */
const blankComments = (text: string) => text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, " "));

/** `JSON.parse` of a JSON column (named in its argument) outside src/store. */
export function columnParses(files: { file: string; text: string }[]): Found[] {
  const pattern = new RegExp(String.raw`JSON\.parse\([^;]*\.(?:${JSON_COLUMNS.join("|")})\b`, "g");
  return files
    .filter(({ file }) => !file.startsWith(`src${path.sep}store${path.sep}`))
    .flatMap(({ file, text }) =>
      [...text.matchAll(pattern)].map((match) => ({ file, line: lineOf(text, match.index), text: match[0] })),
    );
}

/**
 * A compare-and-set called as a statement of its own (awaited or not, in a block or as the body of
 * an `if`, `for` or `else`): its result is dropped.
 */
export function discardedCompareAndSets(files: { file: string; text: string }[]): Found[] {
  const pattern = new RegExp(
    String.raw`(?:^|[;{}]|\)|\belse)[ \t\n]*((?:(?:await[ \t]+|void[ \t]+)?(?:${COMPARE_AND_SET.join("|")})|(?:await|void)[ \t]+${COMPARE_AND_SET_FUNCTIONS})\()`,
    "gm",
  );
  return files.flatMap(({ file, text }) => {
    const code = blankComments(text);
    return [...code.matchAll(pattern)].map((match) => {
      const at = match.index + match[0].length - (match[1]?.length ?? 0);
      return { file, line: lineOf(code, at), text: match[1] ?? "" };
    });
  });
}

/**
 * A run, pass or step moved by its table's event outside src/store: outside the store, the named
 * changes of run-changes.ts and step-changes.ts say what a move means and what moves with it.
 */
export function rawStateMoves(files: { file: string; text: string }[]): Found[] {
  const pattern = /\b(?:steps\.move|passes\.transition|runs\.transition)\(/g;
  return files
    .filter(({ file }) => !file.startsWith(`src${path.sep}store${path.sep}`))
    .flatMap(({ file, text }) => {
      const code = blankComments(text);
      return [...code.matchAll(pattern)].map((match) => ({ file, line: lineOf(code, match.index), text: match[0] }));
    });
}

/** The port's writing half (`GitHubPublisher`): a file that calls one of these, or takes the half, writes to GitHub. */
export const GITHUB_WRITES = [
  "addReaction",
  "createComment",
  "updateComment",
  "addLabels",
  "setLabels",
  "removeLabel",
  "ensureIssueClosed",
  "ensurePullRequest",
  "updatePullRequest",
  "replyToReviewComment",
  "addCommentReaction",
  "requestReviewers",
  "setDraft",
  "ensureCheckRun",
  "updateCheckRun",
  "createCheckRun",
  "mergePullRequest",
] as const;

/** Files outside src/github that call a write of the port (a method of it, or `publisherOf`), sorted. */
export function githubWriters(files: { file: string; text: string }[]): string[] {
  const call = new RegExp(String.raw`\.(?:${GITHUB_WRITES.join("|")})\(|\bpublisherOf\(`);
  return files
    .filter(({ file }) => !file.startsWith(`src${path.sep}github${path.sep}`))
    .filter(({ text }) => call.test(blankComments(text)))
    .map(({ file }) => file.split(path.sep).join("/"))
    .sort();
}
