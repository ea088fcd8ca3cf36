import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";

/**
 * Applies `.env` in `cwd` to the environment before anything reads a setting, the way Probot's
 * `run()` will again (same parser, the file's values win), so `npm start`, every `lisa` command and
 * Probot itself see one configuration. No file is no change.
 */
export function loadDotEnv(cwd = process.cwd()): void {
  let text: string;
  try {
    text = readFileSync(path.join(cwd, ".env"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  Object.assign(process.env, parseEnv(text));
}
