// The image's HEALTHCHECK: /healthz where Lisa serves it, at LISA_METRICS_ADDRESS when set (the
// image sets it), else beside the webhook path on PORT. Exit 0 when healthy, 1 otherwise.
const address = process.env.LISA_METRICS_ADDRESS;
const at = address?.lastIndexOf(":") ?? -1;
const host = address && at > 0 ? address.slice(0, at).replace(/^\[|\]$/g, "") : "127.0.0.1";
const port = address ? address.slice(at + 1) : (process.env.PORT ?? "3000");
// Listening on every address, it answers on loopback too.
const reach = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
fetch(`http://${reach}:${port}/healthz`, { signal: AbortSignal.timeout(4_000) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
