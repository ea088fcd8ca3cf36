import { generateKeyPairSync } from "node:crypto";
import { Probot, ProbotOctokit } from "probot";
import { LisaOctokit, lisaUserAgent } from "../src/github/lisa-octokit.ts";

// 1,024 bits: made in 15 ms instead of 49 in every test process and Lisa child that loads this; it
// signs only JWTs for the emulator, which checks none.
const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 1024,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

/**
 * A Probot instance for tests: a throw-away App key, retries and throttling off so failures show at
 * once, quiet unless LISA_TEST_LOG names a level. `retries` turns Octokit's retries back on, as
 * `npm start` has them (a 5xx or 429 is sent again up to three times); throttling stays off, since
 * its one write a second would only make each test slower. `deployed` is Octokit as `npm start` has
 * it, throttling and all, for the benchmark's figures "as deployed".
 */
/** The App id of every test Probot, as APP_ID would give it. */
export const TEST_APP_ID = 123;

export function createTestProbot(options: { secret: string; baseUrl?: string; retries?: boolean; deployed?: boolean }): Probot {
  return new Probot({
    appId: TEST_APP_ID,
    privateKey,
    secret: options.secret,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    logLevel: (process.env.LISA_TEST_LOG as "info" | undefined) ?? "fatal",
    // The function form is applied after Probot's own defaults, which would otherwise re-enable throttling.
    Octokit: options.deployed
      ? LisaOctokit
      : ProbotOctokit.defaults((instanceOptions: { userAgent?: string }) => ({
          ...instanceOptions,
          userAgent: lisaUserAgent(instanceOptions.userAgent),
          retry: { enabled: options.retries ?? false },
          throttle: { enabled: false },
        })),
  });
}
