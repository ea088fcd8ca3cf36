import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { CONFIG_PATH, parseConfigYaml } from "../config/parse-config.ts";
import { ConfigError } from "../errors.ts";

/**
 * `lisa config check [path]`: validates a `.github/lisa.yml` offline with the parser Lisa uses,
 * printing the same problem Lisa would post on an issue. Exit status 0 when valid, 1 otherwise.
 */
export async function configCheck(file: string = CONFIG_PATH): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    process.stderr.write(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})\n`);
    return 1;
  }
  // `_extends` is followed on GitHub by Probot's config loader, which removes the key; offline it
  // can only be named. Its keys are merged shallowly: a top-level key here replaces the base's.
  const extended = extendsOf(text);
  if (extended !== undefined) text = text.replace(/^_extends:.*(\r?\n|$)/m, "");
  try {
    const config = parseConfigYaml(text);
    const repos = config.repos?.map((r) => r.repo).join(", ") ?? "the issue's own repository";
    process.stdout.write(
      `${file} is valid: label \`${config.label}\`, ${config.gates.length} gate(s), ${config.judges.length} judge(s), providers ${config.providers.map((p) => p.name).join(" → ")}, repositories: ${repos}.\n`,
    );
    if (extended !== undefined)
      process.stdout.write(
        `It extends \`${extended}\`, which was not read: on GitHub its keys apply where this file has none (top-level keys are replaced whole, not merged).\n`,
      );
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${file}: ${error.message}\n`);
    return 1;
  }
}

/** The value of a top-level `_extends` key, if the text is YAML with one. */
function extendsOf(text: string): string | undefined {
  try {
    const value = (parseYaml(text) as { _extends?: unknown } | null)?._extends;
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
