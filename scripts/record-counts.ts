// The counts docs/architecture.md keeps (its "Counts" section): prints each place found and the
// counts; exits 1 when a count that must be zero is not, or a file outside src/publication writes to GitHub.
import { fileURLToPath } from "node:url";
import { columnParses, discardedCompareAndSets, githubWriters, rawStateMoves, sourceFiles } from "../dev/record-counts.ts";

const files = sourceFiles(fileURLToPath(new URL("..", import.meta.url)));
const parses = columnParses(files);
const discarded = discardedCompareAndSets(files);
const moves = rawStateMoves(files);
for (const found of [...parses, ...discarded, ...moves]) console.error(`${found.file}:${found.line}: ${found.text}`);
console.log(`JSON.parse of a row column outside src/store: ${parses.length}`);
console.log(`discarded compare-and-set results: ${discarded.length}`);
console.log(`state moves outside src/store: ${moves.length}`);
const writers = githubWriters(files);
const strays = writers.filter((file) => !file.startsWith("src/publication/"));
console.log(`files that write to GitHub outside src/github: ${writers.length}, ${strays.length} of them outside src/publication`);
for (const file of writers) console.log(`  ${file}`);
if (parses.length + discarded.length + moves.length + strays.length > 0) process.exit(1);
