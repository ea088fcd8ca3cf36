// Part of `npm run lint`: Lisa's source files held to dev/source-rules.ts (long files say why;
// comments cite only the repository's own documents). Prints each problem; exits 1 when there is one.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sourceRuleProblems } from "../dev/source-rules.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const files = readdirSync(path.join(ROOT, "src"), { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts"))
  .map((file) => path.join("src", file))
  .map((file) => ({ path: file, text: readFileSync(path.join(ROOT, file), "utf8") }));
const problems = sourceRuleProblems(files, (file) => existsSync(path.join(ROOT, file)));
for (const problem of problems) console.error(problem);
if (problems.length > 0) process.exit(1);
console.log(`source rules: ${files.length} files in src/, no problem`);
