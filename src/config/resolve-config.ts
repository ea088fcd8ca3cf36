import { parse as parseYaml } from "yaml";
import { ConfigError } from "../errors.ts";
import { CONFIG_PATH, labelOf } from "./parse-config.ts";

/** One config file of one repository. */
export interface ConfigFileRef {
  owner: string;
  repo: string;
  path: string;
}

/** A file as GitHub gave it: its text and ETag, or both null when it does not exist. */
export interface ConfigFileText {
  etag: string | null;
  content: string | null;
}

/** Reads a file, conditionally when given the ETag of the copy held: "unchanged" is GitHub's 304. */
export type ReadConfigFile = (file: ConfigFileRef, etag: string | null) => Promise<ConfigFileText | "unchanged">;

/** The copies of config files a reader keeps between reads (config-cache.ts). */
export interface ConfigFileCache {
  get(file: ConfigFileRef): Promise<(ConfigFileText & { validatedAt: number }) | undefined>;
  /** `label`: what the repository's config resolved to, given for the repository's own file only. */
  put(file: ConfigFileRef, text: ConfigFileText, label: string | null): Promise<void>;
  /** Whether a copy validated then may stand in for the file without asking GitHub. */
  fresh(validatedAt: number): boolean;
}

/**
 * The parsed `.github/lisa.yml` of a repository as Probot's config loader resolves it (null when
 * there is none): the repository's file, else its owner's `.github` repository's, then each
 * `_extends` in turn, top-level keys of the later files overridden by the earlier. With a cache,
 * each file is asked for with its ETag, and the owner's file is asked again only once its copy is
 * no longer fresh: all repositories of an owner share it, so a repository without a file of its
 * own costs one request, not two. A copy read at or after `since` (when the label being decided
 * arrived) is used as it is: labels stored while one read was under way cost that read only.
 */
export async function resolveConfig(
  read: ReadConfigFile,
  ref: { owner: string; repo: string },
  cache?: ConfigFileCache,
  since?: number,
) {
  const own = { owner: ref.owner, repo: ref.repo, path: CONFIG_PATH };
  const loaded: { file: ConfigFileRef; text: ConfigFileText; asked: boolean }[] = [];
  const load = async (file: ConfigFileRef, mayReuse: boolean) => {
    const held = await cache?.get(file);
    const reuse =
      held !== undefined &&
      ((mayReuse && cache?.fresh(held.validatedAt) === true) || (since !== undefined && held.validatedAt >= since));
    // No ETag is sent without a copy held, so "unchanged" always has one to stand for.
    const answer = reuse ? "unchanged" : await read(file, held?.etag ?? null);
    const text = answer === "unchanged" && held ? held : (answer as ConfigFileText);
    loaded.push({ file, text, asked: !reuse });
    return parseFile(file, text.content);
  };
  let label: string | null = null;
  try {
    const configs = [await load(own, false)];
    if (configs[0] === null && ref.repo.toLowerCase() !== ".github") {
      configs.push(await load({ owner: ref.owner, repo: ".github", path: CONFIG_PATH }, true));
    }
    for (let last = configs.at(-1); last?._extends !== undefined; last = configs.at(-1)) {
      const target = extendsTarget(ref.owner, last._extends);
      delete last._extends;
      if (loaded.some(({ file }) => sameFile(file, target))) {
        throw new ConfigError(`\`${CONFIG_PATH}\` extends ${describe(target)}, which is already part of it: a loop`);
      }
      configs.push(await load(target, false));
    }
    const found = configs.filter((config) => config !== null);
    const raw = found.length > 0 ? Object.assign({}, ...found.reverse()) : null;
    label = labelOf(raw);
    return raw as unknown;
  } finally {
    // Kept even when the config is unusable: the next read is still conditional. No label then, so
    // the web process stores every label of the repository until a worker reads a usable file.
    for (const { file, text, asked } of loaded) {
      if (asked) await cache?.put(file, text, sameFile(file, own) ? label : null);
    }
  }
}

/** A file's YAML as Probot's loader reads it: an empty file is `{}`, a missing one null. */
function parseFile(file: ConfigFileRef, content: string | null): Record<string, unknown> | null {
  if (content === null) return null;
  let parsed: unknown;
  try {
    parsed = parseYaml(content, { logLevel: "error" });
  } catch (error) {
    throw new ConfigError(`${describe(file)} is not valid YAML: ${(error as Error).message}`, { cause: error });
  }
  if (typeof parsed === "string") throw new ConfigError(`${describe(file)} is not a YAML mapping`);
  return (parsed || {}) as Record<string, unknown>;
}

// `repo`, `owner/repo`, either with `:path.yml`, as Probot's loader accepts them.
const EXTENDS = /^(?:([a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38})\/)?([-_.\w\d]+)(?::([-_./\w\d]+\.ya?ml))?$/i;

function extendsTarget(owner: string, value: unknown): ConfigFileRef {
  const match = typeof value === "string" ? EXTENDS.exec(value) : null;
  if (!match) throw new ConfigError(`\`${CONFIG_PATH}\` has an invalid \`_extends\`: ${JSON.stringify(value)}`);
  return { owner: match[1] || owner, repo: match[2] ?? "", path: match[3] || CONFIG_PATH };
}

const sameFile = (a: ConfigFileRef, b: ConfigFileRef) =>
  a.owner.toLowerCase() === b.owner.toLowerCase() && a.repo.toLowerCase() === b.repo.toLowerCase() && a.path === b.path;

const describe = (file: ConfigFileRef) => `\`${file.owner}/${file.repo}:${file.path}\``;
