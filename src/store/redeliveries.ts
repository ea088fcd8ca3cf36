import type { Database } from "./database.ts";
import { sql } from "./sql.ts";

/** The failed webhook deliveries whose redelivery Lisa asked GitHub for: each is asked for once. */
export class RedeliveryRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Takes the asking for one attempt's redelivery: false when another process (or an earlier Lisa) took it. */
  async take(deliveryId: number, guid: string): Promise<boolean> {
    const taken = await this.#db.all<{ id: number }>(
      sql`INSERT INTO redeliveries (delivery_id, guid, asked_at) VALUES (${deliveryId}, ${guid}, ${this.#db.now()}) ON CONFLICT DO NOTHING RETURNING id`,
    );
    return taken.length > 0;
  }
}
