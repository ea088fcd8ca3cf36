import { z } from "zod";
import { ciFailureSchema, fileChangeSchema, gateLineSchema, humanCommitSchema, prGateSchema } from "../records/columns.ts";
import { manifestSchema } from "../records/manifest.ts";
import type { PassRow, RunRow, StepPassRow, StepRow } from "./rows.ts";
import type { SqlValue } from "./sql.ts";

// The JSON columns of passes, steps and step_passes, decoded here once and encoded here once: the
// rows the store hands out hold domain values, and no caller parses a column.

const gateLines = z.array(gateLineSchema);
const fileChanges = z.array(fileChangeSchema);
const humanCommits = z.array(humanCommitSchema);
const texts = z.array(z.string());

/**
 * A JSON column's value; null when the column is null. A column that is not JSON, or not what
 * `schema` says, reads as `fallback`: an old or damaged row is read, never thrown on.
 */
function decode<T>(text: SqlValue | undefined, schema: z.ZodType<T>, fallback: T | null): T | null {
  if (text === null || text === undefined) return null;
  let json: unknown;
  try {
    json = JSON.parse(String(text));
  } catch {
    return fallback;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : fallback;
}

/**
 * How each JSON column is decoded: a list that cannot be read is empty, a single value is absent,
 * and a configuration is empty (every setting its default).
 */
const COLUMNS = {
  config: (text: SqlValue | undefined) => decode(text, z.unknown(), {}),
  gates: (text: SqlValue | undefined) => decode(text, gateLines, []),
  changed_files: (text: SqlValue | undefined) => decode(text, fileChanges, []),
  human_shas: (text: SqlValue | undefined) => decode(text, humanCommits, []),
  refinements: (text: SqlValue | undefined) => decode(text, texts, []),
  open_questions: (text: SqlValue | undefined) => decode(text, texts, []),
  manifest: (text: SqlValue | undefined) => decode(text, manifestSchema, null),
  gate: (text: SqlValue | undefined) => decode(text, prGateSchema, null),
  ci_failure: (text: SqlValue | undefined) => decode(text, ciFailureSchema, null),
} as const;

type JsonColumn = keyof typeof COLUMNS;
const isJsonColumn = (column: string): column is JsonColumn => Object.hasOwn(COLUMNS, column);

/** A row as the database holds it: its JSON columns as text. */
export type Stored<Row> = { [K in keyof Row]: K extends JsonColumn ? string | null : Row[K] };

function decodeRow<Row>(stored: Stored<Row>): Row {
  const row: Record<string, unknown> = { ...stored };
  for (const [column, value] of Object.entries(stored as Record<string, SqlValue>))
    if (isJsonColumn(column)) row[column] = COLUMNS[column](value);
  return row as Row;
}

export const decodeStep = (stored: Stored<StepRow>): StepRow => decodeRow(stored);
export const decodeStepPass = <Row extends StepPassRow>(stored: Stored<Row>): Row => decodeRow(stored);
export const decodePass = (stored: Stored<PassRow>): PassRow => decodeRow(stored);
export const decodeRun = <Row extends RunRow>(stored: Stored<Row>): Row => decodeRow(stored);

/** A configuration as its column holds it: JSON, `{}` for none. */
export const encodeConfig = (config: unknown): string => JSON.stringify(config ?? {});

/** Fields to write, their JSON columns as text; undefined still leaves a column as it is. */
export function encodeFields(fields: object): Record<string, SqlValue | undefined> {
  const encoded: Record<string, SqlValue | undefined> = {};
  for (const [column, value] of Object.entries(fields))
    encoded[column] =
      column === "config"
        ? encodeConfig(value)
        : isJsonColumn(column) && value !== null && value !== undefined
          ? JSON.stringify(value)
          : value;
  return encoded;
}
