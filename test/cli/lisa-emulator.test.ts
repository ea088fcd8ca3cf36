import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../dev/free-port.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The way docs/deployment.md gives to try `npm start` offline: `lisa emulator` as a GitHub Enterprise Server host,
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

type State = {
  deliveries: { event: string; action: string; status: number | null }[];
  issues: { number: number; labels: string[]; comments: { user: string; body: string }[] }[];
  pulls: { number: number; state: string; draft: boolean; head: string; reviews: { user: string; state: string }[] }[];
};

describe("lisa emulator with npm start", () => {
  it("goes from a labeled issue to an accepted run with the stand-in agent and the controls docs/deployment.md shows", async () => {
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

    // The key as `docker run --env-file` passes the `.env` Probot's manifest flow writes: inline,
    // newlines as `\n`, and the double quotes kept. The agent is the stand-in the env file names.
    const { PRIVATE_KEY_PATH: keyFile = "", ...written } = readEnvFile(envFile);
    expect(written.LISA_CLAUDE_PATH).toBe(path.join(ROOT, "emulator/stand-in-agent.mjs"));
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
      },
    });
    await waitFor("Lisa to listen", () => lisa.output().includes("Listening on"), 30_000);

    const control = async (route: string, body: unknown) => {
      const answer = await fetch(`${url}/_emulator/${route}`, { method: "POST", body: JSON.stringify(body) });
      expect(answer.status, `${route}: ${await answer.clone().text()}`).toBe(201);
      return (await answer.json()) as Record<string, unknown>;
    };
    const state = () => fetch(`${url}/_emulator/state`).then((answer) => answer.json() as Promise<State>);
    // Until `done` holds and Lisa has answered every webhook sent so far, for a minute at most.
    const settle = async (what: string, done: (now: State) => boolean | undefined) =>
      waitFor(
        what,
        async () => {
          const now = await state();
          return done(now) && now.deliveries.every((d) => d.status !== null) && now;
        },
        60_000,
      );

    expect(await control("issues", { title: "Add a health check" })).toEqual({ number: 1 });
    let last = await settle("Lisa's pull request and review request", (now) =>
      now.issues[0]?.comments.some((c) => c.body.includes("Ready for review")),
    );
    // Every webhook reached Lisa, which checked its signature.
    expect(last.deliveries.find((d) => d.event === "issues" && d.action === "labeled")?.status).toBe(200);
    expect(last.deliveries.every((d) => d.status === 200)).toBe(true);
    expect(last.issues[0]?.labels).toContain("lisa:review");
    // The pull request is issue 2 of the repository, opened by Lisa from the branch it pushed.
    expect(last.pulls).toEqual([expect.objectContaining({ number: 2, state: "open", draft: false, reviews: [] })]);

    // Changes requested with an inline comment: pass 2 on the same pull request, then the gate again.
    await control("reviews", {
      pull: 2,
      event: "request_changes",
      body: "Also a test",
      comments: [{ path: "STAND-IN.md", line: 3, body: "say why" }],
    });
    last = await settle("pass 2 to reach the gate", (now) =>
      now.issues[0]?.comments.some((c) => /pass 2/i.test(c.body) && c.body.includes("Ready for review")),
    );
    // A personal token for `lisa run`, which answers GET /user as the person and reads the branch.
    const { token } = await control("token", {});
    const user = await fetch(`${url}/api/v3/user`, { headers: { authorization: `token ${token}` } });
    expect(((await user.json()) as { login: string }).login).toBe("octocat");
    const head = await fetch(`${url}/api/v3/repos/acme/demo/contents/STAND-IN.md?ref=${last.pulls[0]?.head}`, {
      headers: { accept: "application/vnd.github.raw+json", authorization: `token ${token}` },
    });
    expect(await head.text()).toMatch(/- Session 1: .*\n- Session 2: /);

    // A command as the person, then their approval: the run is accepted.
    await control("comments", { issue: 1, body: "/lisa status" });
    await control("reviews", { pull: 2, event: "approve" });
    last = await settle("the run to be accepted", (now) => now.issues[0]?.labels.includes("lisa:accepted"));
    expect(last.pulls[0]?.reviews.map((review) => review.state)).toEqual(["CHANGES_REQUESTED", "APPROVED"]);
    expect(last.issues[0]?.comments.filter((c) => c.user === "octocat").map((c) => c.body)).toEqual(["/lisa status"]);
    expect(last.deliveries.every((d) => d.status === 200)).toBe(true);

    // A control with a bad body says what is wrong.
    const bad = await fetch(`${url}/_emulator/reviews`, { method: "POST", body: JSON.stringify({ pull: 2, event: "merge" }) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe('"event" must be one of approve, request_changes, comment\n');
  }, 180_000);
});

describe("lisa emulator for a Lisa on another host", () => {
  it("names the host in GHE_HOST, listens on every address, and takes its repositories away when stopped", async () => {
    const dir = tempDir("lisa-emulator");
    const temp = tempDir("emulator-tmp");
    const envFile = path.join(dir, "lisa.env");
    const emulator = start(LISA, ["emulator", "--port", "0", "--host", "emulator", "--write-env", envFile], {
      cwd: dir,
      env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir, TMPDIR: temp },
    });
    const port = await waitFor(
      "the emulator to print its address",
      () => /at http:\/\/[\d.]+:(\d+):/.exec(emulator.output())?.[1],
    );
    expect(readEnvFile(envFile).GHE_HOST).toBe(`emulator:${port}`);
    // Bound to 0.0.0.0 (a container's other hosts reach it by name), not to loopback alone.
    const listening = readFileSync("/proc/net/tcp", "utf8")
      .split("\n")
      .filter((line) => / 0A /.test(line))
      .map((line) => line.trim().split(/\s+/)[1]);
    expect(listening).toContain(`00000000:${Number(port).toString(16).toUpperCase().padStart(4, "0")}`);
    expect(readdirSync(temp).filter((name) => name.startsWith("lisa-emulator-"))).toHaveLength(1);
    emulator.child.kill("SIGTERM");
    await new Promise((resolve) => emulator.child.once("exit", resolve));
    children.splice(children.indexOf(emulator.child), 1);
    expect(readdirSync(temp).filter((name) => name.startsWith("lisa-"))).toEqual([]);
  });
});
