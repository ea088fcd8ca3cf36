import { createHmac, randomUUID } from "node:crypto";

/** One webhook the emulator sent (or, without a webhook URL, would have sent). */
export interface Delivery {
  /** The `x-github-delivery` GUID; a redelivery keeps it, as GitHub's does. */
  id: string;
  event: string;
  action: string | undefined;
  payload: Record<string, unknown>;
  /** The receiver's HTTP status; null when nothing answered (no URL, refused, timed out). */
  status: number | null;
  error?: string;
  /** This attempt's id in the App's delivery log (`GET /app/hook/deliveries`): each redelivery has its own. */
  attempt?: number;
  /** When it was sent, as the delivery log shows it. */
  deliveredAt?: string;
  redelivery?: boolean;
}

/** `sha256=<hex>`: the HMAC GitHub puts in `x-hub-signature-256`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** GitHub gives up on a delivery after ten seconds. */
const TIMEOUT_MS = 10_000;

/**
 * Sends signed webhooks and remembers each delivery. Deliveries the caller does not wait for (those
 * caused by API calls) are tracked so tests can wait until every one has been answered.
 */
export function createWebhookSender(options: {
  secret: string;
  url: () => string | undefined;
  appId: () => number;
  /** The events the App subscribes to; GitHub sends it no other. All when omitted. */
  events?: readonly string[] | undefined;
}) {
  const log: Delivery[] = [];
  const pending = new Set<Promise<void>>();
  let attempts = 0;

  async function deliver(delivery: Delivery): Promise<Delivery> {
    attempts += 1;
    delivery.attempt = attempts;
    delivery.deliveredAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    log.push(delivery);
    const url = options.url();
    if (!url) {
      delivery.error = "no webhook URL";
      return delivery;
    }
    const body = JSON.stringify(delivery.payload);
    try {
      const response = await fetch(url, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "user-agent": "GitHub-Hookshot/emulator",
          "x-github-event": delivery.event,
          "x-github-delivery": delivery.id,
          "x-github-hook-installation-target-type": "integration",
          "x-github-hook-installation-target-id": String(options.appId()),
          "x-hub-signature-256": signature(options.secret, body),
        },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      delivery.status = response.status;
      await response.body?.cancel();
    } catch (error) {
      delivery.error = (error as Error).message;
    }
    return delivery;
  }

  /** Counts `work` as under way until it settles; its failure is the caller's to see, not `idle()`'s. */
  function track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    pending.add(settled);
    void settled.then(() => pending.delete(settled));
    return work;
  }

  return {
    /** Sends `payload` as `event`; resolves once the receiver has answered. Never rejects. */
    send(event: string, payload: Record<string, unknown>): Promise<Delivery> {
      const action = typeof payload.action === "string" ? payload.action : undefined;
      const delivery: Delivery = { id: randomUUID(), event, action, payload, status: null };
      // GitHub neither sends nor lists an event the App did not subscribe to.
      if (options.events && !options.events.includes(event)) return Promise.resolve({ ...delivery, error: "not subscribed" });
      return track(deliver(delivery));
    },
    /** Sends a past delivery again with the same GUID and payload, like "Redeliver" in GitHub's UI. */
    redeliver(id: string): Promise<Delivery> {
      const original = log.find((delivery) => delivery.id === id);
      if (!original) throw new Error(`no webhook delivery ${id}`);
      const { event, action, payload } = original;
      return track(deliver({ id, event, action, payload, status: null, redelivery: true }));
    },
    track,
    deliveries: (): Delivery[] => log.map((delivery) => ({ ...delivery })),
    /** Resolves when every delivery under way, including ones started meanwhile, has been answered. */
    async idle(): Promise<void> {
      while (pending.size > 0) await Promise.all(pending);
    },
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;
