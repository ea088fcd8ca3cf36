import { readFileSync } from "node:fs";
import { credentialsInHome, credentialsInText } from "./credentials-in-files.ts";

/** Variables whose values are credentials by their name: `*_KEY`, `*_TOKEN`, `*_SECRET`, passwords. */
const CREDENTIAL_NAME = /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)($|_)/i;
/** …but not where one is kept: `PRIVATE_KEY_PATH` names a file, whose contents are read below. */
const LOCATION_NAME = /_(PATH|FILE|DIR)$/i;

/** Values shorter than this are not secrets worth the name, and redacting them would mangle ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** How much of `PRIVATE_KEY_PATH` (or OpenCode's config file) to read: a PEM key is a few kilobytes. */
const KEY_FILE_LIMIT = 64 * 1024;

/**
 * Every secret value Lisa holds: from its environment, the App's private key (whole, and each of
 * its lines, since a file may hold it cut differently; also read from `PRIVATE_KEY_PATH`), the
 * webhook and OAuth client secrets, and every variable named like a credential (each provider's
 * model key among them); from the files it reads, each credential in the agents' home template
 * (`homeTemplate`) and in OpenCode's config (`OPENCODE_CONFIG`, `OPENCODE_CONFIG_CONTENT`). These
 * values must never leave in anything Lisa publishes, pushes or logs; installation tokens join them
 * as they are minted.
 */
export function heldSecrets(env: NodeJS.ProcessEnv, homeTemplate?: string | undefined): string[] {
  const values = new Set<string>();
  const add = (value: string | undefined) => {
    const trimmed = value?.trim();
    if (trimmed && trimmed.length >= MIN_SECRET_LENGTH) values.add(trimmed);
  };
  for (const [name, value] of Object.entries(env)) {
    if (CREDENTIAL_NAME.test(name) && !LOCATION_NAME.test(name)) add(value);
  }
  for (const key of [env.PRIVATE_KEY, readKeyFile(env.PRIVATE_KEY_PATH)]) {
    if (!key) continue;
    // `.env` files hold the key with escaped newlines; the key on GitHub's page has real ones.
    const pem = key.replace(/\\n/g, "\n");
    add(pem);
    for (const line of pem.split("\n")) if (!line.startsWith("-----")) add(line);
  }
  for (const text of [readKeyFile(env.OPENCODE_CONFIG), env.OPENCODE_CONFIG_CONTENT]) {
    if (text) for (const value of credentialsInText(text)) add(value);
  }
  if (homeTemplate) for (const { values: found } of credentialsInHome(homeTemplate)) for (const value of found) add(value);
  return [...values];
}

function readKeyFile(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file, "utf8").slice(0, KEY_FILE_LIMIT);
  } catch {
    return undefined;
  }
}
