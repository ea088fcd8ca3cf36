import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createGitHubEmulator, type GitHubEmulator } from "./github-emulator.ts";
import type { ReviewState } from "./state.ts";

const REPO = "acme/demo";
const USER = "octocat";
/** The agent `npm start` runs against the emulator unless told otherwise: it calls no model. */
const STAND_IN_AGENT = fileURLToPath(new URL("./stand-in-agent.mjs", import.meta.url));

const USAGE = `usage: lisa emulator [--port 3001] [--webhook-url URL] [--write-env lisa-emulator.env] [--host NAME]

Runs the GitHub emulator as a GitHub Enterprise Server host on 127.0.0.1, so that \`npm start\` can be
tried offline. It makes the repository ${REPO} (config: label lisa), where ${USER} may write, and a
key for the App; it writes what \`npm start\` needs into the env file, with a stand-in agent that
calls no model (LISA_CLAUDE_PATH; remove it to run the real Claude Code with a key of yours).
--host names it in GHE_HOST for a Lisa on another host (a container); it then listens on every address.

Act as ${USER} on it (JSON bodies):
  POST /_emulator/issues    {"title", "body"}                 open an issue and label it lisa
  POST /_emulator/comments  {"issue", "body"}                 comment, e.g. "/lisa redirect …"
  POST /_emulator/reviews   {"pull", "event", "body", "comments": [{"path", "line", "body"}]}
                            event: approve, request_changes or comment
  POST /_emulator/token                                       a personal token of ${USER}, for lisa run
  GET  /_emulator/state                                       deliveries, issues, pull requests, reviews
`;

/**
 * `lisa emulator`: the emulator as a standalone server, in GHES layout (REST under /api/v3, git at
 * the root), which is where Probot looks for GitHub when `GHE_HOST` is set. A person acts on it as
 * octocat through the controls in USAGE (ACTIONS below), from a labeled issue to an accepted run, and
 * `npm start` runs the stand-in agent the env file names, so no model key is needed.
 */
export async function emulator(args: string[]): Promise<number> {
  let values: { port?: string; "webhook-url"?: string; "write-env"?: string; host?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: "string" },
        "webhook-url": { type: "string" },
        "write-env": { type: "string" },
        host: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const port = Number(values.port ?? 3001);
  const webhookUrl = values["webhook-url"] ?? "http://localhost:3000/api/github/webhooks";
  const envFile = path.resolve(values["write-env"] ?? "lisa-emulator.env");
  const secret = randomBytes(16).toString("hex");

  const reposRoot = mkdtempSync(path.join(tmpdir(), "lisa-emulator-"));
  let github: GitHubEmulator | undefined;
  github = createGitHubEmulator({
    reposRoot,
    webhookSecret: secret,
    webhookUrl,
    ghes: true,
    intercept: (request, response) => (github ? controls(github, request, response) : false),
  });
  // Reached by name from another host (a container beside it), or on loopback only.
  await github.start(port, values.host ? "0.0.0.0" : "127.0.0.1");
  await github.createRepo(REPO, { files: { "README.md": "# Demo\n" }, config: "label: lisa\n" });
  github.addCollaborator(REPO, USER, "write");

  // The emulator does not check the App's JWT, but Probot needs a real key to sign one.
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyFile = `${envFile}.pem`;
  writeFileSync(keyFile, privateKey.export({ type: "pkcs1", format: "pem" }), { mode: 0o600 });
  const host = values.host ? `${values.host}:${new URL(github.url).port}` : new URL(github.url).host;
  writeFileSync(
    envFile,
    [
      `APP_ID=1`,
      `PRIVATE_KEY_PATH=${keyFile}`,
      `WEBHOOK_SECRET=${secret}`,
      `GHE_HOST=${host}`,
      "GHE_PROTOCOL=http",
      `LISA_CLAUDE_PATH=${STAND_IN_AGENT}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  process.stdout.write(
    [
      `GitHub emulator (GHES layout) at ${github.url}: REST ${github.apiUrl}, git ${github.url}/${REPO}.git`,
      `Webhooks go to ${webhookUrl}.`,
      `Start Lisa against it:  set -a; . ${envFile}; set +a; npm start`,
      `Open and label an issue: curl -X POST ${github.url}/_emulator/issues -d '{"title": "Add a health check"}'`,
      `See what was delivered:  curl ${github.url}/_emulator/state`,
      `Approve pull request 2:  curl -X POST ${github.url}/_emulator/reviews -d '{"pull": 2, "event": "approve"}'`,
      `The agent is a stand-in that calls no model (LISA_CLAUDE_PATH in ${path.basename(envFile)}); \`lisa emulator --help\` lists every control.`,
      "",
    ].join("\n"),
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await github.stop();
  rmSync(reposRoot, { recursive: true, force: true });
  return 0;
}

/** A review's event as a person names it in a control, and the state GitHub gives the review. */
const REVIEW_EVENTS: Record<string, ReviewState> = {
  approve: "APPROVED",
  request_changes: "CHANGES_REQUESTED",
  comment: "COMMENTED",
};

/** Reads a control's JSON body, 64 KiB at most. */
function jsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
      if (body.length > 65_536) request.destroy(new Error("a control's body is at most 64 KiB"));
    });
    request.on("error", reject);
    request.on("end", () => {
      try {
        const parsed: unknown = JSON.parse(body || "{}");
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
          throw new Error("the body must be a JSON object");
        resolve(parsed as Record<string, unknown>);
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** A whole number given as `name` in a control's body. */
function numberIn(body: Record<string, unknown>, name: string): number {
  const value = body[name];
  if (typeof value !== "number" || !Number.isInteger(value)) throw new Error(`"${name}" must be a number, e.g. {"${name}": 2}`);
  return value;
}

/** What a person does through each control, as octocat; each answers with what it made. */
const ACTIONS: Record<string, (github: GitHubEmulator, body: Record<string, unknown>) => Promise<unknown>> = {
  async "/_emulator/issues"(github, body) {
    const title = typeof body.title === "string" ? body.title : "Add a health check";
    const issue = await github.createIssue(REPO, { title, body: typeof body.body === "string" ? body.body : "", user: USER });
    await github.labelIssue(REPO, issue.number, "lisa", USER);
    return { number: issue.number };
  },
  async "/_emulator/comments"(github, body) {
    if (typeof body.body !== "string" || body.body === "") throw new Error('"body" must be the comment\'s text');
    await github.commentOnIssue(REPO, numberIn(body, "issue"), body.body, USER);
    return { issue: body.issue };
  },
  async "/_emulator/reviews"(github, body) {
    const state = REVIEW_EVENTS[String(body.event ?? "approve")];
    if (!state) throw new Error(`"event" must be one of ${Object.keys(REVIEW_EVENTS).join(", ")}`);
    const comments = Array.isArray(body.comments) ? (body.comments as { path: string; line: number; body: string }[]) : [];
    await github.submitReview(REPO, numberIn(body, "pull"), {
      state,
      body: typeof body.body === "string" ? body.body : "",
      user: USER,
      comments,
    });
    return { pull: body.pull, state };
  },
  async "/_emulator/token"(github) {
    return { login: USER, token: github.createPersonalToken(USER) };
  },
};

/** The controls; false for any other request, which the emulator answers as GitHub. */
function controls(github: GitHubEmulator, request: IncomingMessage, response: ServerResponse): boolean {
  const url = new URL(request.url ?? "/", "http://emulator");
  if (request.method === "GET" && url.pathname === "/_emulator/state") {
    const state = {
      deliveries: github.deliveries().map(({ event, action, status }) => ({ event, action, status })),
      issues: github.issues(REPO).map((issue) => ({
        number: issue.number,
        title: issue.title,
        labels: issue.labels.map((label) => label.name),
        comments: github.comments(REPO, issue.number).map((comment) => ({ user: comment.user.login, body: comment.body })),
      })),
      pulls: github.pulls(REPO).map((pull) => ({
        number: pull.number,
        title: pull.title,
        state: pull.state,
        draft: pull.draft,
        head: pull.head.ref,
        reviews: github.reviews(REPO, pull.number).map((review) => ({ user: review.user?.login, state: review.state })),
      })),
    };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(state, null, 2));
    return true;
  }
  const action = request.method === "POST" ? ACTIONS[url.pathname] : undefined;
  if (!action) return false;
  jsonBody(request)
    .then((body) => action(github, body))
    .then(
      (made) => response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(made)),
      (error: Error) => response.writeHead(400, { "content-type": "text/plain" }).end(`${error.message}\n`),
    );
  return true;
}
