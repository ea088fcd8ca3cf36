import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createGitHubEmulator, type GitHubEmulator } from "./github-emulator.ts";

const REPO = "acme/demo";
const USER = "octocat";

const USAGE = `usage: lisa emulator [--port 3001] [--webhook-url URL] [--write-env lisa-emulator.env]

Runs the GitHub emulator as a GitHub Enterprise Server host on 127.0.0.1, so that \`npm start\` can be
tried offline. It makes the repository ${REPO} (config: label lisa), where ${USER} may write, and a
key for the App; it writes what \`npm start\` needs into the env file.
`;

/**
 * `lisa emulator`: the emulator as a standalone server, in GHES layout (REST under /api/v3, git at
 * the root), which is where Probot looks for GitHub when `GHE_HOST` is set. A person acts on it
 * through two controls:
 *
 * - `POST /_emulator/issues` with `{"title": …, "body": …}` opens an issue in acme/demo as octocat
 *   and labels it `lisa`, which sends the webhooks GitHub would send;
 * - `GET /_emulator/state` answers the deliveries sent so far (event, action, the receiver's status)
 *   and the issues with their labels and comments.
 */
export async function emulator(args: string[]): Promise<number> {
  let values: { port?: string; "webhook-url"?: string; "write-env"?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: "string" },
        "webhook-url": { type: "string" },
        "write-env": { type: "string" },
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

  let github: GitHubEmulator | undefined;
  github = createGitHubEmulator({
    reposRoot: mkdtempSync(path.join(tmpdir(), "lisa-emulator-")),
    webhookSecret: secret,
    webhookUrl,
    ghes: true,
    intercept: (request, response) => (github ? controls(github, request, response) : false),
  });
  await github.start(port);
  await github.createRepo(REPO, { files: { "README.md": "# Demo\n" }, config: "label: lisa\n" });
  github.addCollaborator(REPO, USER, "write");

  // The emulator does not check the App's JWT, but Probot needs a real key to sign one.
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const keyFile = `${envFile}.pem`;
  writeFileSync(keyFile, privateKey.export({ type: "pkcs1", format: "pem" }), { mode: 0o600 });
  const host = new URL(github.url).host;
  writeFileSync(
    envFile,
    [`APP_ID=1`, `PRIVATE_KEY_PATH=${keyFile}`, `WEBHOOK_SECRET=${secret}`, `GHE_HOST=${host}`, "GHE_PROTOCOL=http", ""].join(
      "\n",
    ),
    { mode: 0o600 },
  );
  process.stdout.write(
    [
      `GitHub emulator (GHES layout) at ${github.url}: REST ${github.apiUrl}, git ${github.url}/${REPO}.git`,
      `Webhooks go to ${webhookUrl}.`,
      `Start Lisa against it:  set -a; . ${envFile}; set +a; npm start`,
      `Open and label an issue: curl -X POST ${github.url}/_emulator/issues -d '{"title": "Add a health check"}'`,
      `See what was delivered:  curl ${github.url}/_emulator/state`,
      "",
    ].join("\n"),
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await github.stop();
  return 0;
}

/** The two controls; false for any other request, which the emulator answers as GitHub. */
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
    };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(state, null, 2));
    return true;
  }
  if (request.method === "POST" && url.pathname === "/_emulator/issues") {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
      if (body.length > 65_536) request.destroy();
    });
    request.on("end", () => {
      void (async () => {
        try {
          const { title = "Add a health check", body: text = "" } = JSON.parse(body || "{}") as { title?: string; body?: string };
          const issue = await github.createIssue(REPO, { title, body: text, user: USER });
          await github.labelIssue(REPO, issue.number, "lisa", USER);
          response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ number: issue.number }));
        } catch (error) {
          response.writeHead(400, { "content-type": "text/plain" }).end(`${(error as Error).message}\n`);
        }
      })();
    });
    return true;
  }
  return false;
}
