import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { CommandRow } from "./rows.ts";

/** What a command row's MAC covers: everything the worker acts on, as Lisa wrote it. */
export type SignedFields = Pick<CommandRow, "delivery_id" | "event_key" | "kind" | "payload" | "created_at">;

/**
 * The key command rows are signed with, derived from `secret` (LISA_STORE_KEY, else the webhook
 * secret): whoever can write to the database but does not hold it cannot write a row Lisa runs.
 */
export function commandKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "lisa", "lisa command rows v1", 32));
}

/** HMAC-SHA256 over the signed fields, in hex; a JSON array keeps the fields apart. */
export function commandMac(key: Buffer, row: SignedFields): string {
  const fields = [row.delivery_id, row.event_key ?? null, row.kind, row.payload, Number(row.created_at)];
  return createHmac("sha256", key).update(JSON.stringify(fields)).digest("hex");
}

/** Whether `row` carries the MAC Lisa gave it when it wrote it. */
export function hasValidMac(key: Buffer, row: SignedFields & { mac: string | null }): boolean {
  if (!row.mac || !/^[0-9a-f]{64}$/.test(row.mac)) return false;
  return timingSafeEqual(Buffer.from(row.mac, "hex"), Buffer.from(commandMac(key, row), "hex"));
}

/**
 * The key material of a Lisa started without LISA_STORE_KEY or a webhook secret (`lisa run`, the
 * tests): made once and kept in the data directory, readable by Lisa's user only.
 */
export function keptStoreKey(dataDir: string): string {
  const file = path.join(dataDir, "store.key");
  mkdirSync(dataDir, { recursive: true });
  // Written whole aside, then linked in (which fails if another start linked its key first): an
  // empty key file, as a full disk or a Lisa killed mid-write left one, signed every later command
  // with an empty key.
  if (!existsSync(file)) {
    const partial = `${file}.${process.pid}.partial`;
    const made = randomBytes(32).toString("hex");
    try {
      writeFileSync(partial, made, { mode: 0o600 });
      linkOrCreate(partial, file, made);
    } finally {
      rmSync(partial, { force: true });
    }
  }
  const key = readFileSync(file, "utf8").trim();
  if (!/^[0-9a-f]{64}$/.test(key))
    throw new Error(`${file} does not hold a store key (64 hex digits): remove it, and Lisa makes a new one`);
  return key;
}

/** Links `partial` in as `file` unless `file` exists; where links are not supported, creates it in place. */
function linkOrCreate(partial: string, file: string, content: string): void {
  try {
    try {
      linkSync(partial, file);
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "ENOSYS") throw error;
      writeFileSync(file, content, { mode: 0o600, flag: "wx" });
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}
