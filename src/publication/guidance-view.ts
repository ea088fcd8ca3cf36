import type { GuidanceView } from "../reporting/views.ts";
import type { GuidanceRow } from "../store/store.ts";

/** A guidance row as the renderers show it, numbered by its place in the pass. */
export function guidanceView(row: GuidanceRow, index: number): GuidanceView {
  return {
    n: index + 1,
    author: row.author,
    source: row.source,
    ...(row.path ? { where: row.line ? `${row.path}:${row.line}` : row.path } : {}),
    ...(row.url ? { url: row.url } : {}),
    body: row.body,
    outdated: row.outdated === 1,
    ...(row.status ? { status: row.status } : {}),
    ...(row.status_note ? { note: row.status_note } : {}),
    replied: row.replied === 1,
  };
}
