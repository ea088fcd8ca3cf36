import { EMULATED_WEBHOOK_SECRET, type EmulatedLisa } from "../../dev/emulated-lisa.ts";
import type { Delivery, GitHubEmulator, Role } from "../../emulator/github-emulator.ts";
import { signature } from "../../emulator/webhooks.ts";

/** The repository and issue of GitHub's example `issues.labeled` payload, rebuilt in the emulator. */
export const OWNER = "Codertocat";
export const REPO = "Hello-World";
export const HELLO_WORLD = `${OWNER}/${REPO}`;
export const ISSUE = 1;
export const BRANCH = "lisa/1-spelling-error-in-the-readme-file";

/**
 * Codertocat's Hello-World in the emulator: "# Hello Wrold" on `master`, `config` as its
 * `.github/lisa.yml`, `people` as collaborators (Codertocat owns it, so is its admin), and issue #1
 * reporting the typo, opened by Codertocat.
 */
export async function createHelloWorld(github: GitHubEmulator, config: string, people: Record<string, Role> = {}) {
  await github.createRepo(HELLO_WORLD, { defaultBranch: "master", files: { "README.md": "# Hello Wrold\n" }, config });
  for (const [login, role] of Object.entries(people)) github.addCollaborator(HELLO_WORLD, login, role);
  await github.createIssue(HELLO_WORLD, {
    title: "Spelling error in the README file",
    body: "It looks like you accidently spelled 'Commit' with two 't's.",
    user: OWNER,
  });
}

/** `sender` labels issue #1 `bug`, and Lisa handles everything that causes. */
export async function labelBug(env: EmulatedLisa, sender = OWNER): Promise<Delivery> {
  const delivery = await env.github.labelIssue(HELLO_WORLD, ISSUE, "bug", sender);
  await env.settle();
  return delivery;
}

const R = "/repos/:owner/:repo";

/** Every route a run uses that ends before it opens a pull request (it fails or blocks): label to last comment. */
export const NO_PR_ROUTES = [
  "POST /app/installations/:id/access_tokens",
  `GET ${R}/contents/*path`,
  `GET ${R}/collaborators/:username/permission`,
  `POST ${R}/issues/:number/reactions`,
  `GET ${R}/issues/:number/comments`,
  `POST ${R}/issues/:number/comments`,
  `PATCH ${R}/issues/comments/:id`,
  `GET ${R}/issues/:number/labels`,
  `POST ${R}/issues/:number/labels`,
  `PUT ${R}/issues/:number/labels`,
];

/** Every route a run that delivers a pull request uses, from the label to the review gate. */
export const DELIVERY_ROUTES = [
  ...NO_PR_ROUTES,
  `GET ${R}/pulls`,
  `POST ${R}/pulls`,
  `GET ${R}/pulls/:number`,
  `GET ${R}/pulls/:number/reviews`,
  `POST ${R}/pulls/:number/requested_reviewers`,
  // The App's own check runs are found by its id, which APP_ID gives: GitHub is never asked (no GET /app).
  `GET ${R}/commits/:ref/check-runs`,
  `POST ${R}/check-runs`,
  // The pull request's own CI, looked at once after the push (issue 25): protection's required
  // checks on the base branch (classic protection's and rulesets'), the head's suites and its
  // combined status (none report here).
  `GET ${R}/branches/:branch`,
  `GET ${R}/rules/branches/*branch`,
  `GET ${R}/commits/:ref/check-suites`,
  `GET ${R}/commits/:ref/status`,
];

/** The routes (`METHOD pattern`) the requests from the `from`th on took, each once, sorted. */
export function routesTaken(github: GitHubEmulator, from = 0): string[] {
  const taken = github
    .requests()
    .slice(from)
    .flatMap((r) => (r.route === null ? [] : [`${r.method} ${r.route}`]));
  return [...new Set(taken)].sort();
}

/** Sends `delivery`'s payload again under a new GUID, signed as the emulator signs (a second delivery of one event). */
export async function deliverUnderNewId(env: EmulatedLisa, delivery: Delivery, id: string): Promise<void> {
  const body = JSON.stringify(delivery.payload);
  const response = await fetch(env.webhookUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-delivery": id,
      "x-github-event": delivery.event,
      "x-hub-signature-256": signature(EMULATED_WEBHOOK_SECRET, body),
    },
    body,
  });
  if (!response.ok) throw new Error(`Lisa answered delivery ${id} with ${response.status}`);
}

/** A secret in GitHub's long stateless installation-token format, for text that must never carry one. */
export const TOKEN_SHAPED = `ghs_123456_${"eyJhbGciOiJSUzI1NiJ9".repeat(4)}.${"eyJpc3MiOiJnaXRodWIifQ".repeat(4)}.c2lnbmF0dXJl`;

/** The installation tokens the emulator hands Lisa from now on, as it hands them out. */
export function installationTokens(github: GitHubEmulator): string[] {
  const tokens: string[] = [];
  github.beforeAnswer((request, { response }) => {
    const token = (response as { token?: unknown } | undefined)?.token;
    if (request.route === "/app/installations/:id/access_tokens" && typeof token === "string") tokens.push(token);
  });
  return tokens;
}
