import { isIP } from "node:net";

/**
 * One destination a sandboxed process may reach through Lisa's egress proxy: a host name (or
 * `*.suffix`), or an IP literal, on one port. `private` lets this exact host and port resolve to
 * a loopback or private address: only a model API base URL from Lisa's own environment gets it,
 * and only when the operator allows private model APIs.
 */
export interface HostRule {
  host: string;
  port: number;
  private?: boolean;
}

/** Host names in rules and requests are compared lower-case, without a trailing dot or IPv6 brackets. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
}

/** A host as `.github/lisa.yml` may name it in `sandbox.allow_hosts`: a name, `*.name`, optionally `:port` (1 to 65535). No IP literals. */
export const ALLOW_HOST_PATTERN =
  /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}(:([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]))?$/i;

/** The rules for one `allow_hosts` entry: its port, or HTTPS and HTTP when it names none. */
export function rulesOfAllowedHost(entry: string): HostRule[] {
  const match = /^(.*?)(?::(\d+))?$/.exec(entry.trim());
  const host = normalizeHost(match?.[1] ?? "");
  const port = match?.[2] ? Number(match[2]) : undefined;
  return port ? [{ host, port }] : [443, 80].map((p) => ({ host, port: p }));
}

/** The rule for a model API's base URL (its host and port, the scheme's default port when it names none). */
export function ruleOfUrl(url: string, allowPrivate: boolean): HostRule | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return undefined;
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80;
  return { host: normalizeHost(parsed.hostname), port, ...(allowPrivate ? { private: true } : {}) };
}

/** The rule that lets `host:port` through, if any. IP literals match only a rule naming the same literal. */
export function matchRule(rules: readonly HostRule[], host: string, port: number): HostRule | undefined {
  const name = normalizeHost(host);
  return rules.find((rule) => {
    if (rule.port !== port) return false;
    if (rule.host === name) return true;
    return rule.host.startsWith("*.") && isIP(name) === 0 && name.endsWith(rule.host.slice(1));
  });
}

/** One `LISA_EGRESS_ALLOW` entry: a host name or IP literal (IPv6 in brackets) and a port, which it must name. */
const OPERATOR_HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?):([1-9]\d{0,4})$/i;

/**
 * The operator's hosts from `LISA_EGRESS_ALLOW` (comma- or space-separated `host:port`): each a
 * rule that may resolve to a private or reserved address, as an internal registry does.
 * @returns the rules, or the first entry that is not `host:port`
 */
export function parseOperatorHosts(text: string): { rules: HostRule[] } | { bad: string } {
  const rules: HostRule[] = [];
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    const match = OPERATOR_HOST.exec(entry);
    const port = Number(match?.[3]);
    if (!match || port > 65_535) return { bad: entry };
    rules.push({ host: normalizeHost(match[1] as string), port, private: true });
  }
  return { rules };
}
