import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { tempDir } from "./git-fixtures.ts";

const LISA = fileURLToPath(new URL("../../src/cli/lisa.ts", import.meta.url));

/**
 * `lisa <args>` as a person runs it (through its shebang), in a fresh folder that is also its
 * HOME, with only PATH, HOME and `env` in its environment. Asynchronous, so the test can serve
 * it (an emulator in the test's own process); the output's last newline is dropped.
 */
export async function runLisaCommand(args: string[], env: Record<string, string> = {}) {
  const cwd = tempDir("lisa-command");
  const result = await execa(LISA, args, {
    cwd,
    env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: cwd, ...env },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
  return { status: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}
