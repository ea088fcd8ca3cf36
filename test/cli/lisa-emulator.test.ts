import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { freePort } from "../../dev/free-port.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The README's way to try `npm start` offline: `lisa emulator` as a GitHub Enterprise Server host,
// then `npm start` with the variables it wrote, then an issue labeled through its control.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LISA = path.join(ROOT, "src/cli/lisa.ts");

const children: ChildProcess[] = [];
afterEach(() => {
  // Each in a process group of its own: killing `npm` alone would leave the node it started.
  for (const child of children.splice(0)) if (child.pid) process.kill(-child.pid, "SIGKILL");
});

/** Spawns `command` and keeps what it prints. */
function start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"], detached: true });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { child, output: () => output };
}

/** The variables of an env file, as `set -a; . file` would export them. */
function readEnvFile(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

describe("lisa emulator with npm start", () => {
  it("delivers a labeled issue's webhooks to Lisa, which answers through /api/v3 and pushes over git HTTP", async () => {
    const dir = tempDir("lisa-emulator");
    const envFile = path.join(dir, "lisa.env");
    const lisaPort = await freePort();
    const path_ = `${path.dirname(process.execPath)}:/usr/bin:/bin`;
    const emulator = start(
      LISA,
      ["emulator", "--port", "0", "--webhook-url", `http://127.0.0.1:${lisaPort}/api/github/webhooks`, "--write-env", envFile],
      { cwd: dir, env: { PATH: path_, HOME: dir } },
    );
    const url = await waitFor(
      "the emulator to print its address",
      () => /at (http:\/\/127\.0\.0\.1:\d+):/.exec(emulator.output())?.[1],
    );
    expect(emulator.output()).toContain(`Start Lisa against it:  set -a; . ${envFile}; set +a; npm start`);

    const agent = createFakeClaude([
      {
        write: { "health.ts": "export const health = () => 'ok';\n" },
        manifest: { title: "Add a health check", what: "health()." },
      },
    ]);
    // The key as `docker run --env-file` passes the `.env` Probot's manifest flow writes: inline,
    // newlines as `\n`, and the double quotes kept.
    const { PRIVATE_KEY_PATH: keyFile = "", ...written } = readEnvFile(envFile);
    const dockerKey = `"${readFileSync(keyFile, "utf8").replace(/\n/g, "\\n")}"`;
    const lisa = start("npm", ["start"], {
      cwd: ROOT,
      env: {
        ...written,
        PRIVATE_KEY: dockerKey,
        PATH: path_,
        HOME: dir,
        PORT: String(lisaPort),
        LISA_DATA_DIR: path.join(dir, "data"),
        LISA_CLAUDE_PATH: agent.binary,
      },
    });
    await waitFor("Lisa to listen", () => lisa.output().includes("Listening on"), 30_000);

    const opened = await fetch(`${url}/_emulator/issues`, {
      method: "POST",
      body: JSON.stringify({ title: "Add a health check" }),
    });
    expect(opened.status).toBe(201);
    const state = () =>
      fetch(`${url}/_emulator/state`).then(
        (answer) =>
          answer.json() as Promise<{
            deliveries: { event: string; action: string; status: number | null }[];
            issues: { number: number; labels: string[]; comments: { user: string; body: string }[] }[];
          }>,
      );
    // Until Lisa has opened the pull request and said so, and has answered every webhook sent so
    // far (her last writes send some as the comment is written), for a minute at most.
    const settled = (now: typeof last) =>
      now.issues[0]?.comments.some((c) => c.body.includes("Ready for review")) && now.deliveries.every((d) => d.status !== null);
    let last = await state();
    for (let tries = 0; tries < 600 && !settled(last); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await state();
    }
    // Every webhook reached Lisa, which checked its signature.
    expect(last.deliveries.find((d) => d.event === "issues" && d.action === "labeled")?.status).toBe(200);
    expect(last.deliveries.every((d) => d.status === 200)).toBe(true);
    const [issue, pull] = last.issues;
    expect(issue?.comments.find((c) => c.user === "lisa[bot]")?.body).toContain("👀 Ready for review");
    expect(issue?.labels).toContain("lisa:review");
    // The pull request is issue 2 of the repository, opened by Lisa from the branch it pushed.
    expect(pull?.number).toBe(2);
    expect(agent.calls()).toHaveLength(1);
  }, 120_000);
});
