import { getPrivateKey } from "@probot/get-private-key";
import { EnvError } from "./env-schema.ts";

/**
 * The App's private key as the environment holds it, without the double quotes around it that
 * `docker run --env-file` keeps. Probot's manifest flow writes `.env` as
 * `PRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----\n…"`; dotenv (`npm start`) removes the quotes,
 * Docker does not, and Probot then cannot read the key.
 */
export function unquotedPrivateKey(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed && trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : value;
}

/**
 * The App's id and private key as Probot's `run` read them (PRIVATE_KEY, PRIVATE_KEY_PATH, or the
 * one `.pem` file in the folder Lisa starts from); undefined while either is missing, before the
 * App is registered.
 * @throws EnvError when a key is named but cannot be read
 */
export function appCredentials(env: NodeJS.ProcessEnv, cwd = process.cwd()): { appId: number; privateKey: string } | undefined {
  let privateKey: string | null;
  try {
    privateKey = getPrivateKey({ env: { ...env, PRIVATE_KEY: unquotedPrivateKey(env.PRIVATE_KEY) }, cwd });
  } catch (error) {
    throw new EnvError(`the App's private key: ${(error as Error).message.replace(/^\[@probot\/get-private-key\] /, "")}`);
  }
  const appId = Number(env.APP_ID);
  return appId && privateKey ? { appId, privateKey } : undefined;
}
