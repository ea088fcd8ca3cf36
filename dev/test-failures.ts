// What failed in a run of the suite, handed from the test reporter (test/support/failures-reporter.ts) to
// `npm run check`, whose summary at the end of a long run is where CI shows it.

/** The file a run of the suite writes its failures to, when set. */
export const FAILURES_VARIABLE = "LISA_TEST_FAILURES";

/** One test, or one test file's own error, that failed. */
export interface Failure {
  file: string;
  test: string;
  error: string;
}
