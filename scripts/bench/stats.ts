/** How many interleaved repetitions each figure takes the median of. */
export const REPS = Math.max(5, Number(process.env.BENCH_REPS ?? 5));

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Where the PostgreSQL figures keep their stores: a fresh schema per measurement. */
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const freshSchema = (name: string) => {
  const url = new URL(DATABASE_URL);
  url.searchParams.set("schema", `bench_${name}_${Date.now().toString(36)}`);
  return url.toString();
};

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export const verdict = (met: boolean) => (met ? "met" : "missed");

export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
