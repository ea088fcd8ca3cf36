import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The absolute path `command` runs as: itself when it names a path (relative to `cwd`), else the
 * first executable file of that name on `searchPath`, the way a shell finds it. Undefined when none.
 */
export function resolveExecutable(command: string, searchPath: string | undefined, cwd: string): string | undefined {
  if (command.includes("/")) {
    const file = path.resolve(cwd, command);
    return isExecutableFile(file) ? file : undefined;
  }
  for (const dir of (searchPath ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, command);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}
