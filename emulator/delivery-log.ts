import type { EmulatorContext } from "./context.ts";
import type { RouteRequest, RouteResponse } from "./router.ts";
import type { Delivery } from "./webhooks.ts";

/** One attempt of the App's delivery log as GitHub shows it (`hook-delivery-item`). */
function deliveryJson(context: EmulatorContext, delivery: Delivery) {
  const payload = delivery.payload as { installation?: { id?: number }; repository?: { id?: number } };
  const ok = delivery.status !== null && delivery.status >= 200 && delivery.status < 300;
  return {
    id: delivery.attempt ?? 0,
    guid: delivery.id,
    delivered_at: delivery.deliveredAt ?? "",
    redelivery: delivery.redelivery ?? false,
    duration: 0.01,
    status: ok ? "OK" : delivery.status === null ? "Timed out" : `Invalid HTTP Response: ${delivery.status}`,
    status_code: delivery.status ?? 0,
    event: delivery.event,
    action: delivery.action ?? null,
    installation_id: payload.installation?.id ?? context.installationId,
    repository_id: payload.repository?.id ?? null,
    throttled_at: null,
  };
}

/**
 * `GET /app/hook/deliveries`: the App's delivery attempts, newest first, paged as GitHub pages this
 * list: `per_page` (30 unless asked, at most 100) and an opaque `cursor` in the `Link` to the next
 * page, never `page`.
 */
export function deliveryLog(context: EmulatorContext, request: RouteRequest, base: string): RouteResponse {
  const perPage = Math.min(Math.max(Number.parseInt(request.query.get("per_page") ?? "", 10) || 30, 1), 100);
  const cursor = Number(request.query.get("cursor") ?? "");
  const sent = context.webhooks
    .deliveries()
    .filter((delivery) => delivery.attempt !== undefined)
    .sort((a, b) => (b.attempt ?? 0) - (a.attempt ?? 0));
  const after = Number.isInteger(cursor) && cursor > 0 ? sent.filter((delivery) => (delivery.attempt ?? 0) < cursor) : sent;
  const page = after.slice(0, perPage);
  const last = page.at(-1)?.attempt;
  const more = after.length > perPage && last !== undefined;
  return {
    status: 200,
    body: page.map((delivery) => deliveryJson(context, delivery)),
    headers: more ? { link: `<${base}/app/hook/deliveries?per_page=${perPage}&cursor=${last}>; rel="next"` } : {},
  };
}

/** `POST /app/hook/deliveries/{id}/attempts`: sends that attempt's delivery again (a new attempt, same GUID); 202. */
export function redeliverAttempt(context: EmulatorContext, attempt: number): RouteResponse | undefined {
  const delivery = context.webhooks.deliveries().find((d) => d.attempt === attempt);
  if (!delivery) return undefined;
  void context.webhooks.redeliver(delivery.id).catch(() => undefined);
  return { status: 202, body: {} };
}
