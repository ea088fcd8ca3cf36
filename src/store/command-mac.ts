import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
  try {
    writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return readFileSync(file, "utf8").trim();
}
