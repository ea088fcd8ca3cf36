import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { installRoot, linksOnPath } from "../../src/sandbox/bwrap-args.ts";
import { runSandboxed } from "../../src/sandbox/run-sandboxed.ts";
import { tempDir } from "../support/git-fixtures.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const sh = (script: string, options: { cwd?: string; env?: Record<string, string>; homeTemplate?: string } = {}) =>
  runSandboxed("sh", ["-c", script], {
    cwd: options.cwd ?? tempDir("sandboxed"),
    env: options.env ?? env,
    timeoutMs: 10_000,
    sandbox: { mode: "bwrap", homeTemplate: options.homeTemplate },
  });

describe("runSandboxed", () => {
  it("gives each process a fresh HOME seeded from the template, and removes it afterwards", async () => {
    const template = tempDir("home-template");
    mkdirSync(path.join(template, ".gemini"));
    writeFileSync(path.join(template, ".gemini", "settings.json"), '{"telemetry":false}');
    const result = await sh(
      'cat "$HOME/.gemini/settings.json"; echo; echo changed > "$HOME/.gemini/settings.json"; echo "$HOME"',
      {
        homeTemplate: template,
      },
    );
    const [settings, home] = result.stdout.trim().split("\n");
    expect(settings).toBe('{"telemetry":false}');
    expect(home).not.toBe(template);
    expect(existsSync(home ?? "")).toBe(false);
    expect(readFileSync(path.join(template, ".gemini", "settings.json"), "utf8")).toBe('{"telemetry":false}');
  });

  it("writes Lisa's files into the fresh HOME over the template's, and never through a link the template holds", async () => {
    const template = tempDir("home-template");
    mkdirSync(path.join(template, ".config", "opencode"), { recursive: true });
    writeFileSync(path.join(template, ".config", "opencode", "opencode.json"), '{"apiKey":"literal"}');
    const files = { [path.join(".config", "opencode", "opencode.json")]: '{"apiKey":"placeholder"}' };
    const run = (homeTemplate: string) =>
      runSandboxed("sh", ["-c", 'cat "$HOME/.config/opencode/opencode.json"'], {
        cwd: tempDir("sandboxed"),
        env,
        timeoutMs: 10_000,
        sandbox: { mode: "bwrap", homeTemplate, homeFiles: files },
      });
    expect((await run(template)).stdout).toBe('{"apiKey":"placeholder"}');
    expect(readFileSync(path.join(template, ".config", "opencode", "opencode.json"), "utf8")).toBe('{"apiKey":"literal"}');

    const outside = tempDir("outside");
    const linked = tempDir("home-template");
    symlinkSync(outside, path.join(linked, ".config"));
    await expect(run(linked)).rejects.toThrow("Lisa will not write .config/opencode/opencode.json outside the sandbox's home");
    expect(existsSync(path.join(outside, "opencode"))).toBe(false);
  });

  it("shows a judge its working directory read-only: it reads the work and cannot change it", async () => {
    const cwd = tempDir("judged");
    writeFileSync(path.join(cwd, "README.md"), "# The work\n");
    const result = await runSandboxed(
      "sh",
      ["-c", 'cat README.md; echo changed > README.md; echo new > new.md; echo "exit $?"'],
      {
        cwd,
        env,
        timeoutMs: 10_000,
        sandbox: { mode: "bwrap", readOnlyCwd: true },
      },
    );
    expect(result.stdout).toContain("# The work");
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(readFileSync(path.join(cwd, "README.md"), "utf8")).toBe("# The work\n");
    expect(existsSync(path.join(cwd, "new.md"))).toBe(false);
    // The same command without the flag changes it: the flag is what refused it.
    await runSandboxed("sh", ["-c", "echo changed > README.md"], { cwd, env, timeoutMs: 10_000, sandbox: { mode: "bwrap" } });
    expect(readFileSync(path.join(cwd, "README.md"), "utf8")).toBe("changed\n");
  });

  it("gives a private /tmp and passes the environment it is given, no more", async () => {
    const marker = path.join(tempDir("host-tmp"), "marker");
    writeFileSync(marker, "host");
    const result = await sh(`test ! -e '${marker}' && echo "$TMPDIR" && env | cut -d= -f1 | sort | tr '\\n' ' '`, {
      env: { ...env, ONLY_THIS: "1" },
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe("/tmp");
    expect(result.stdout).toContain("ONLY_THIS");
    expect(result.stdout).not.toMatch(/\bVITEST\b|\bNODE_ENV\b/);
  });

  it("finds programs through PATH entries that are symbolic links, as on the host", async () => {
    const install = tempDir("tool-install");
    mkdirSync(path.join(install, "node_modules", ".bin"), { recursive: true });
    // The agent's CLI runs a sibling program by name, as CLIs run their helpers.
    for (const [name, body] of [
      ["hello-tool", "exec sibling-tool"],
      ["sibling-tool", "echo hello from the tool"],
    ]) {
      writeFileSync(path.join(install, "node_modules", ".bin", name ?? ""), `#!/bin/sh\n${body}\n`);
      chmodSync(path.join(install, "node_modules", ".bin", name ?? ""), 0o755);
    }
    const project = tempDir("project");
    symlinkSync(path.join(install, "node_modules"), path.join(project, "node_modules"));
    const result = await runSandboxed("hello-tool", [], {
      cwd: tempDir("sandboxed"),
      env: { PATH: `${path.join(project, "node_modules", ".bin")}:/usr/bin:/bin` },
      timeoutMs: 10_000,
    });
    expect(result.stdout).toBe("hello from the tool\n");
  });

  it("reports a command that is on no PATH entry as not found, without starting a sandbox", async () => {
    const result = await runSandboxed("no-such-tool", [], { cwd: tempDir("sandboxed"), env, timeoutMs: 10_000 });
    expect(result.ending).toBe("spawn_failed");
    expect(result.spawnError?.code).toBe("ENOENT");
  });
});

describe("a host where the sandbox cannot start", () => {
  /** Runs `code` in a Node process whose PATH has no bwrap, with `lisa` the path of src/. */
  async function withoutBwrap(code: string): Promise<string> {
    const src = pathToFileURL(path.resolve("src")).href;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--disable-warning=ExperimentalWarning", "--input-type=module", "-e", `const lisa = ${JSON.stringify(src)};\n${code}`],
      { env: { PATH: "/nonexistent" }, cwd: tempDir("no-bwrap") },
    );
    return stdout;
  }

  it("fails every agent session with what is wrong and how to fix it, naming LISA_SANDBOX=off", async () => {
    const stdout = await withoutBwrap(`
      const { runAgent } = await import(lisa + "/providers/run-agent.ts");
      const { claudeProvider } = await import(lisa + "/providers/claude.ts");
      const result = await runAgent({ provider: claudeProvider, binary: "/bin/true", model: undefined, cwd: process.cwd(),
        prompt: "", env: { PATH: "/usr/bin:/bin" }, timeoutMs: 5000, stallMs: 5000 });
      console.log(JSON.stringify(result.failure));`);
    const failure = JSON.parse(stdout) as { kind: string; message: string };
    expect(failure.kind).toBe("sandbox");
    expect(failure.message).toContain("`bwrap` is not on PATH");
    expect(failure.message).toContain("apt-get install bubblewrap");
    expect(failure.message).toContain("--security-opt seccomp=unconfined");
    expect(failure.message).toContain("LISA_SANDBOX=off");
  });

  it("refuses to run gates too, and runs nothing", async () => {
    const ran = path.join(tempDir("no-bwrap-gate"), "ran");
    const stdout = await withoutBwrap(`
      const { runGates } = await import(lisa + "/workflow/checks/run-gates.ts");
      const error = await runGates(["touch ${ran}"], { cwd: process.cwd(), env: { PATH: "/usr/bin:/bin" }, timeoutMs: 5000, secrets: [] })
        .then(() => undefined, (e) => e);
      console.log(JSON.stringify({ name: error?.name, message: error?.message }));`);
    expect(JSON.parse(stdout)).toMatchObject({
      name: "SandboxError",
      message: expect.stringContaining("apt-get install bubblewrap"),
    });
    expect(existsSync(ran)).toBe(false);
  });

  it("still runs agents when the operator opted out with LISA_SANDBOX=off", async () => {
    const stdout = await withoutBwrap(`
      const { runSandboxed } = await import(lisa + "/sandbox/run-sandboxed.ts");
      const result = await runSandboxed("/bin/echo", ["unconfined"], { cwd: process.cwd(), env: {}, timeoutMs: 5000, sandbox: { mode: "off" } });
      console.log(result.stdout.trim());`);
    expect(stdout.trim()).toBe("unconfined");
  });
});

describe("installRoot", () => {
  it("shows an npm package with its hoisted dependencies: the outermost node_modules", () => {
    expect(installRoot("/srv/app/node_modules/@google/gemini-cli/node_modules/x/bin/x.js")).toBe("/srv/app/node_modules");
  });

  it("shows a program in a bin/ folder with its prefix, e.g. Node in /opt/node/bin", () => {
    expect(installRoot("/opt/node-22/bin/node")).toBe("/opt/node-22");
  });

  it("never shows a folder that holds Lisa's working directory or home", () => {
    expect(installRoot(path.join(process.cwd(), "tools", "agent"))).toBe(path.join(process.cwd(), "tools"));
    expect(installRoot(path.join(homedir(), "bin", "agent"))).toBe(path.join(homedir(), "bin"));
  });
});

describe("linksOnPath", () => {
  it("lists each symbolic link met on the way to a path, with its target", () => {
    const root = tempDir("links");
    mkdirSync(path.join(root, "real", "bin"), { recursive: true });
    symlinkSync(path.join(root, "real"), path.join(root, "alias"));
    symlinkSync("alias", path.join(root, "alias2"));
    expect(linksOnPath(path.join(root, "alias2", "bin"))).toEqual([
      { location: path.join(root, "alias2"), target: "alias" },
      { location: path.join(root, "alias"), target: path.join(root, "real") },
    ]);
  });
});
