import { createPrivateKey } from "node:crypto";
import { readFile } from "node:fs/promises";
import { unquotedPrivateKey } from "../../config/app-key.ts";
import { MIN_STORE_KEY_BYTES } from "../../config/env-schema.ts";
import type { Check } from "./check.ts";

/** The App's settings as Lisa reads them, without asking GitHub: its id, its private key, its webhook secret. */
export async function appChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = [];
  const register = "Register the App (`npm start`, then open http://localhost:3000) or copy its settings into .env.";
  checks.push(
    env.APP_ID && /^\d+$/.test(env.APP_ID)
      ? { name: "APP_ID", status: "ok", detail: env.APP_ID }
      : { name: "APP_ID", status: "FAIL", detail: env.APP_ID ? `not a number: ${env.APP_ID}` : "not set", fix: register },
  );
  const key = await appKey(env);
  if (!key) {
    checks.push({
      name: "private key",
      status: "FAIL",
      detail: "neither PRIVATE_KEY nor a readable PRIVATE_KEY_PATH",
      fix: register,
    });
  } else {
    try {
      const parsed = createPrivateKey(key);
      checks.push({
        name: "private key",
        status: "ok",
        detail: `${parsed.asymmetricKeyType?.toUpperCase()} key, ${parsed.asymmetricKeyDetails?.modulusLength ?? "?"} bits`,
      });
    } catch (error) {
      checks.push({
        name: "private key",
        status: "FAIL",
        detail: `not a PEM private key (${(error as Error).message})`,
        fix: "Download a new key from the App's settings page.",
      });
    }
  }
  const secret = env.WEBHOOK_SECRET ?? "";
  // Without LISA_STORE_KEY the webhook secret also keys the MAC of every stored command.
  const signsCommands = !env.LISA_STORE_KEY && Buffer.byteLength(secret) < MIN_STORE_KEY_BYTES;
  checks.push(
    secret.length >= 16 && secret !== "development" && !signsCommands
      ? { name: "webhook secret", status: "ok", detail: `${secret.length} characters` }
      : secret.length >= 16 && secret !== "development"
        ? {
            name: "webhook secret",
            status: "FAIL",
            detail: `${Buffer.byteLength(secret)} bytes, and without LISA_STORE_KEY it signs the commands Lisa stores, which takes ${MIN_STORE_KEY_BYTES}`,
            fix: "Set LISA_STORE_KEY (e.g. from `openssl rand -hex 32`, the same in every process), or a webhook secret of 32 bytes or more.",
          }
        : {
            name: "webhook secret",
            status: "FAIL",
            detail: secret ? "too short or the development placeholder" : "not set",
            fix: "Set WEBHOOK_SECRET to the App's webhook secret: at least 32 random characters, the same on GitHub.",
          },
  );
  return checks;
}

/** The App's private key as Probot reads it: PRIVATE_KEY (`\\n` for newlines allowed), else the file at PRIVATE_KEY_PATH. */
export async function appKey(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const key = unquotedPrivateKey(env.PRIVATE_KEY)?.replace(/\\n/g, "\n");
  if (key) return key;
  return env.PRIVATE_KEY_PATH ? await readFile(env.PRIVATE_KEY_PATH, "utf8").catch(() => undefined) : undefined;
}
