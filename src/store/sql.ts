/** A value a statement binds: Lisa's rows hold text, numbers and nulls only. */
export type SqlValue = string | number | null;

/**
 * A statement with its values kept apart from its text: `strings` has one more entry than
 * `values`, and each driver joins them with the placeholder its database reads (`?` or `$n`), so
 * no value is ever written into SQL and no SQL is rewritten to suit a dialect.
 */
export interface Sql {
  readonly strings: readonly string[];
  readonly values: readonly SqlValue[];
}

const isSql = (value: unknown): value is Sql =>
  typeof value === "object" && value !== null && "strings" in value && "values" in value;

/** The tag the store writes its statements with; an interpolated `Sql` (from `raw` or `join`) is spliced in. */
export function sql(strings: TemplateStringsArray, ...values: (SqlValue | Sql)[]): Sql {
  const text = [strings[0] ?? ""];
  const bound: SqlValue[] = [];
  values.forEach((value, i) => {
    const parts = isSql(value) ? value : { strings: ["", ""], values: [value] };
    text[text.length - 1] += parts.strings[0] ?? "";
    parts.values.forEach((bind, j) => {
      bound.push(bind);
      text.push(parts.strings[j + 1] ?? "");
    });
    text[text.length - 1] += strings[i + 1] ?? "";
  });
  return { strings: text, values: bound };
}

/** Text the store itself chose (a table or column name from its own code), never a value. */
export const raw = (text: string): Sql => ({ strings: [text], values: [] });

/** `parts` one after the other, `separator` between them. */
export function join(parts: readonly Sql[], separator = ", "): Sql {
  const strings: string[] = [""];
  const values: SqlValue[] = [];
  parts.forEach((part, i) => {
    strings[strings.length - 1] += (i > 0 ? separator : "") + (part.strings[0] ?? "");
    part.values.forEach((value, j) => {
      values.push(value);
      strings.push(part.strings[j + 1] ?? "");
    });
  });
  return { strings, values };
}

/** The statement's text with the n-th value's place (from 1) written as `placeholder(n)`. */
export function render(query: Sql, placeholder: (n: number) => string): string {
  return query.strings.reduce((text, part, i) => (i === 0 ? part : `${text}${placeholder(i)}${part}`), "");
}
