/** One sample of Prometheus' text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const COMMENT = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (\S+)$/;
const SUFFIXES = ["_bucket", "_sum", "_count", ""];

/**
 * Parses the text format strictly: every line a HELP or TYPE comment or a sample, every sample of a
 * family declared by a TYPE line before it, every value a number. Throws on anything else, naming
 * the line, so a test fails on output Prometheus would reject.
 */
export function parsePrometheusText(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const comment = COMMENT.exec(line);
    if (comment) {
      if (comment[1] === "TYPE") types.set(comment[2] ?? "", comment[3] ?? "");
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`not Prometheus text: ${line}`);
    const [, name = "", labelText = "", raw = ""] = sample;
    const family = SUFFIXES.map((suffix) => (name.endsWith(suffix) ? name.slice(0, name.length - suffix.length) : "")).find((f) =>
      types.has(f),
    );
    if (!family) throw new Error(`sample of an undeclared family: ${line}`);
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw !== "NaN") throw new Error(`not a number: ${line}`);
    const labels = Object.fromEntries(
      [...labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    samples.push({ name, labels: labels as Record<string, string>, value });
  }
  return { types, samples };
}
