import { closeSync, type Dirent, openSync, readdirSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { SECRET_SHAPES } from "./secret-shapes.ts";

// Credentials written into files Lisa reads or copies: the agents' home template (CLI settings,
// `.env` files, MCP servers' tokens) and OpenCode's config. Lisa holds them (heldSecrets) and
// `lisa doctor` names the files that still carry one.

/** Whether a key or variable names a credential: apiKey, api_key, TRACKER_TOKEN, clientSecret, password… */
const credentialKey = (name: string) =>
  /(^|[_.-])(api[_-]?key|key|token|secret|password|passwd|credentials?)$/i.test(name) ||
  /[a-z0-9](Key|Token|Secret|Password|Credentials?)$/.test(name) ||
  /^(apikey|authorization|bearer)$/i.test(name);
/** A value that names where a credential is rather than being one: `{env:NAME}`, `${NAME}`, `$NAME`, `{file:…}`. */
const REFERENCE = /^(\{(env|file):[^}]+\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)$/;
/** `NAME=value`, `export NAME=value` or `NAME: value` on a line of its own (.env files, YAML). */
const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][\w.-]*)\s*[=:]\s*["']?([^"'\s#]+)["']?\s*$/gm;

/** Values shorter than this are no credential worth the name (held-secrets.ts keeps the same bound). */
const MIN_LENGTH = 8;
const MAX_FILES = 500;
const MAX_DEPTH = 8;
const MAX_FILE = 256 * 1024;

const literal = (value: string) => value.length >= MIN_LENGTH && !REFERENCE.test(value.trim());

/** String values under credential-named keys of a parsed JSON document. */
export function credentialsInJson(value: unknown, key = ""): string[] {
  if (typeof value === "string") return credentialKey(key) && literal(value) ? [value.trim()] : [];
  if (Array.isArray(value)) return value.flatMap((item) => credentialsInJson(item, key));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => credentialsInJson(v, k));
  return [];
}

/** The credentials a file's text holds: JSON values under credential keys, `NAME=value` assignments, secret shapes. */
export function credentialsInText(text: string): string[] {
  const found = new Set<string>();
  try {
    for (const value of credentialsInJson(JSON.parse(text))) found.add(value);
  } catch {
    // Not JSON: assignments and shapes only.
  }
  for (const [, name = "", value = ""] of text.matchAll(ASSIGNMENT)) if (credentialKey(name) && literal(value)) found.add(value);
  for (const { pattern } of SECRET_SHAPES) for (const match of text.matchAll(pattern)) found.add(match[0].trim());
  return [...found];
}

/** The first `MAX_FILE` bytes of a regular file as text, or undefined for a binary one. */
function readText(file: string): string | undefined {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(MAX_FILE);
    const text = buffer.subarray(0, readSync(fd, buffer, 0, MAX_FILE, 0));
    return text.includes(0) ? undefined : text.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * Every file under `dir` (the agents' home template) that holds a credential, by its path relative
 * to `dir`, with the values. Installed packages (`node_modules`) and links are passed over; at most
 * 500 files, 8 levels deep and 256 KiB of each are read.
 */
export function credentialsInHome(dir: string): { file: string; values: string[] }[] {
  const found: { file: string; values: string[] }[] = [];
  let files = 0;
  const walk = (folder: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory() && entry.name !== "node_modules" && entry.name !== ".git" && depth < MAX_DEPTH)
        walk(full, depth + 1);
      if (!entry.isFile() || ++files > MAX_FILES) continue;
      try {
        if (statSync(full).size === 0) continue;
        const text = readText(full);
        const values = text === undefined ? [] : credentialsInText(text);
        if (values.length > 0) found.push({ file: path.relative(dir, full), values });
      } catch {
        // Unreadable: Lisa's copy into a sandbox fails the same way, and says so.
      }
    }
  };
  walk(dir, 0);
  return found;
}
