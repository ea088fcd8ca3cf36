const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * Parses a duration such as `45m`, `90s`, `1h30m` or a plain number of seconds.
 * Returns undefined when the text is not a duration; `0s` is one, of no time, for callers to judge.
 * @example parseDuration("1h30m") // 5_400_000
 */
export function parseDuration(text: string | number): number | undefined {
  if (typeof text === "number") return Number.isFinite(text) && text >= 0 ? text * 1_000 : undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  const parts = [...trimmed.matchAll(/(\d+)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== trimmed) return undefined;
  let total = 0;
  for (const [, amount, unit] of parts) total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return total;
}
