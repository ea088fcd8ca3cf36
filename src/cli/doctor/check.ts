/** One line of `lisa doctor`'s table: what was checked, how it went, and what to do about it. */
export interface Check {
  name: string;
  status: "ok" | "warn" | "FAIL";
  detail: string;
  /** What to do about it, for a warning or a failure. */
  fix?: string;
}
