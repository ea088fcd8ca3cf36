import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freshSchemaUrl, requirePostgres } from "../../dev/test-postgres.ts";
import { grantedPermissions } from "../../emulator/app-events.ts";
import { createGitHubEmulator } from "../../emulator/github-emulator.ts";
import { parseConfigYaml } from "../../src/config/parse-config.ts";
import { Store } from "../../src/store/store.ts";
import { recordCacheOutcome, setupCacheRoot, storeSetup } from "../../src/workspace/setup-cache.ts";
import { AGENT_BIN } from "../support/agent-clis.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { runLisaCommand } from "../support/lisa-command.ts";

const LISA = fileURLToPath(new URL("../../src/cli/lisa.ts", import.meta.url));
const REFERENCE = fileURLToPath(new URL("../../docs/configuration.md", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs the `lisa` command as a user would (its shebang), with only `env` in its environment. */
function lisa(args: string[], env: Record<string, string> = {}, cwd = tempDir("lisa-cli")) {
  const result = spawnSync(LISA, args, {
    cwd,
    env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: cwd, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("lisa doctor", () => {
  it("fails as root when Claude Code, which refuses root, is installed, and names the fix", () => {
    // uid 0 in a user namespace of its own, so the check runs the same for any user running the test.
    const asRoot = (env: Record<string, string>) => {
      const cwd = tempDir("lisa-cli");
      const result = spawnSync(
        "bwrap",
        [
          "--unshare-user",
          "--uid",
          "0",
          "--gid",
          "0",
          "--bind",
          "/",
          "/",
          "--dev",
          "/dev",
          "--proc",
          "/proc",
          "--",
          LISA,
          "doctor",
        ],
        {
          cwd,
          env: { PATH: `${path.dirname(process.execPath)}:${AGENT_BIN}:/usr/bin:/bin`, HOME: cwd, ...env },
          encoding: "utf8",
        },
      );
      return result.stdout;
    };
    expect(asRoot({})).toMatch(
      /^FAIL {2}claude as this user +root: Claude Code refuses to run with --dangerously-skip-permissions.*\n +fix: Run Lisa as an ordinary user/m,
    );
    expect(asRoot({ IS_SANDBOX: "1" })).toMatch(/^warn {2}claude as this user +root, with IS_SANDBOX set/m);
  });

  it("names every missing piece with its fix on a machine with nothing configured, and exits 1", () => {
    const { status, stdout } = lisa(["doctor"]);
    expect(status).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}APP_ID +not set\n +fix: Register the App/m);
    expect(stdout).toMatch(/^FAIL {2}private key +neither PRIVATE_KEY nor a readable PRIVATE_KEY_PATH\n +fix: /m);
    expect(stdout).toMatch(/^FAIL {2}webhook secret +not set\n +fix: Set WEBHOOK_SECRET/m);
    expect(stdout).toMatch(/^warn {2}claude credentials +none in the environment\n +fix: Set one of ANTHROPIC_API_KEY/m);
    expect(stdout).toMatch(/^ok {4}sandbox /m);
    expect(stdout).toMatch(/^3 failed, \d+ warning\(s\), \d+ ok$/m);
  });

  it("passes a configured deployment, and names a bad variable", async () => {
    const { privateKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    const configured = {
      APP_ID: "12345",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: "0123456789abcdef0123456789abcdef",
      ANTHROPIC_API_KEY: "sk-ant-test",
      LISA_DATA_DIR: path.join(tempDir("doctor-data"), "data"),
    };
    const registry = createServer();
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    const open = (registry.address() as AddressInfo).port;
    const ok = lisa(["doctor"], { ...configured, LISA_EGRESS_ALLOW: `127.0.0.1:${open}` });
    registry.close();
    expect(ok.stdout).toMatch(/^ok {4}private key +RSA key, 2048 bits$/m);
    // The toolchains set-up and gates find on the PATH, with their versions; the operator's hosts, tried.
    expect(ok.stdout).toMatch(new RegExp(`^ok {4}toolchain node +${process.version}$`, "m"));
    expect(ok.stdout).toMatch(/^(ok {4}toolchain go +go version go\S+ .*|warn {2}toolchain go +not found on PATH)$/m);
    expect(ok.stdout).toMatch(new RegExp(`^ok {4}egress 127\\.0\\.0\\.1:${open} +LISA_EGRESS_ALLOW names it; it answers`, "m"));
    expect(ok.stdout).toMatch(/^ok {4}claude credentials +ANTHROPIC_API_KEY$/m);
    expect(ok.status).toBe(0);
    // A PostgreSQL store that answers, and one that does not; the password is never shown.
    // The suite's PostgreSQL (a throwaway one where the machine has none), not whatever runs on 5432.
    const pg = lisa(["doctor"], { ...configured, DATABASE_URL: freshSchemaUrl(await requirePostgres(), "test_doctor") });
    expect(pg.stdout).toMatch(/^ok {4}database +PostgreSQL \d+\.\d+.* at /m);
    const down = lisa(["doctor"], { ...configured, DATABASE_URL: "postgres://lisa:hunter2-secret@127.0.0.1:1/lisa" });
    expect(down.stdout).toMatch(
      /^FAIL {2}database +PostgreSQL at 127\.0\.0\.1:1\/lisa did not answer: .*\n +fix: Start PostgreSQL/m,
    );
    expect(down.stdout).not.toContain("hunter2-secret");
    expect(down.status).toBe(1);
    const bad = lisa(["doctor"], { ...configured, LISA_CONCURRENCY: "two" });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^FAIL {2}environment +LISA_CONCURRENCY="two": must be a whole number of runs, e\.g\. 2$/m);
  });
});

describe("lisa config check", () => {
  const examples = [...readFileSync(REFERENCE, "utf8").matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");

  it("passes every configuration example of the configuration reference", () => {
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const dir = tempDir("config-check");
      writeFileSync(path.join(dir, "lisa.yml"), example);
      const { status, stdout } = lisa(["config", "check", "lisa.yml"], {}, dir);
      expect(status, example).toBe(0);
      expect(stdout).toMatch(/^lisa\.yml is valid: label `/);
    }
  });

  it("prints the very problem Lisa would post on the issue for a broken file, and exits 1", () => {
    const dir = tempDir("config-check");
    const broken = "label: lisa\ngates: npm test\nlimits:\n  session_timeout: soon\n";
    writeFileSync(path.join(dir, ".github-lisa.yml"), broken);
    const { status, stderr } = lisa(["config", "check", ".github-lisa.yml"], {}, dir);
    expect(status).toBe(1);
    const problem = (() => {
      try {
        parseConfigYaml(broken);
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(problem).toContain("gates");
    expect(stderr).toBe(`.github-lisa.yml: ${problem}\n`);
  });

  it("shows its usage, and names an unknown command before it, exiting 2", () => {
    expect(lisa(["--help"]).stdout).toContain("config check [path]");
    const unknown = lisa(["frobnicate"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^lisa: unknown command 'frobnicate'\n\nusage: lisa <command>/);
    expect(lisa(["config", "lint"]).stderr).toMatch(/^lisa: unknown command 'config lint'\n/);
  });
});

describe(".env, read before any setting", () => {
  const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));

  it("stops `npm start` on a bad LISA_ setting written in .env, with the message an exported one gets", () => {
    const cwd = tempDir("lisa-dotenv");
    writeFileSync(path.join(cwd, ".env"), "LISA_CONCURRENCY=two\n");
    // Without .env read first, Probot loaded it after Lisa had read its settings, and Lisa started.
    const result = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", MAIN], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, APP_ID: "1", WEBHOOK_SECRET: "x".repeat(32), PORT: "0", HOST: "127.0.0.1" },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.stderr).toContain(
      'Lisa cannot start; fix these environment variables:\nLISA_CONCURRENCY="two": must be a whole number',
    );
    expect(result.status).toBe(1);
  });

  it("gives lisa doctor the App settings the registration flow wrote to .env", () => {
    const cwd = tempDir("lisa-dotenv");
    writeFileSync(path.join(cwd, ".env"), "APP_ID=4242\nWEBHOOK_SECRET=0123456789abcdef0123456789abcdef\n");
    const { stdout } = lisa(["doctor"], {}, cwd);
    expect(stdout).toMatch(/^ok {4}APP_ID +4242$/m);
    expect(stdout).toMatch(/^ok {4}webhook secret /m);
  });
});

describe("the lisa command on an older Node.js", () => {
  const { bin } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { bin: { lisa: string } };
  const expectNamesTheVersion = (result: { status: number | null; stderr: string }, version: string) => {
    expect(result.stderr).toContain(
      `lisa needs Node.js 22.18 or newer, which runs TypeScript without flags; this is ${version}.`,
    );
    expect(result.stderr).not.toContain("ERR_UNKNOWN_FILE_EXTENSION");
    expect(result.status).toBe(1);
  };

  it("names the Node.js version it needs, as npx lisa runs it, before any TypeScript is loaded", () => {
    // This Node.js, telling the command it is 20.20.2, the version Debian bookworm's nodejs package had.
    const older = 'data:text/javascript,Object.defineProperty(process.versions, "node", { value: "20.20.2" })';
    const result = spawnSync(process.execPath, ["--import", older, path.join(ROOT, bin.lisa), "doctor"], { encoding: "utf8" });
    expectNamesTheVersion(result, "20.20.2");
  });

  const systemNode = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
  const isOlder = /^v(\d+)\.(\d+)/.exec(systemNode);
  it.runIf(isOlder && (Number(isOlder[1]) < 22 || (Number(isOlder[1]) === 22 && Number(isOlder[2]) < 18)))(
    `says so on this machine's own older Node.js (${systemNode || "none"}), through the command's shebang`,
    () => {
      const result = spawnSync(path.join(ROOT, bin.lisa), ["doctor"], { env: { PATH: "/usr/bin:/bin" }, encoding: "utf8" });
      expectNamesTheVersion(result, systemNode.slice(1));
    },
  );
});

describe("lisa status", () => {
  it("says where it looked when there is no store there, and creates none", () => {
    const cwd = tempDir("lisa-status");
    const { status, stderr } = lisa(["status"], {}, cwd);
    expect(status).toBe(1);
    expect(stderr).toBe(
      `lisa status: no store at ${path.join(cwd, "data", "lisa.db")}; run it where Lisa runs, or set LISA_DATA_DIR or DATABASE_URL as Lisa has them\n`,
    );
    expect(existsSync(path.join(cwd, "data"))).toBe(false);
  });
});

describe("lisa status and lisa cache clear", () => {
  it("show the set-up cache's size, entries, hits and misses, and clear one repository's entries or all", async () => {
    const cwd = tempDir("lisa-cache");
    const dataDir = path.join(cwd, "data");
    const store = new Store(path.join(dataDir, "lisa.db"));
    await store.close();
    const root = setupCacheRoot(dataDir);
    for (const repo of ["shop", "blog"]) {
      const worktree = tempDir("lisa-cache-worktree");
      spawnSync("git", ["init", "--quiet"], { cwd: worktree });
      writeFileSync(path.join(worktree, ".gitignore"), "node_modules/\n");
      mkdirSync(path.join(worktree, "node_modules"));
      writeFileSync(path.join(worktree, "node_modules", "a.js"), "x".repeat(100_000));
      await storeSetup(root, { owner: "acme", repo }, "k1", worktree);
    }
    await recordCacheOutcome(root, "miss");
    await recordCacheOutcome(root, "hit");

    const before = lisa(["status"], { LISA_DATA_DIR: dataDir }, cwd);
    expect(before.status).toBe(0);
    expect(before.stdout).toMatch(new RegExp(`set-up cache: 0\\.2 MiB in 2 entries, 1 hit\\(s\\), 1 miss\\(es\\) \\(${root}\\)`));
    expect(lisa(["cache", "clear", "acme/shop"], { LISA_DATA_DIR: dataDir }, cwd).stdout).toBe(
      "lisa cache clear: removed 1 entry of acme/shop\n",
    );
    expect(lisa(["status"], { LISA_DATA_DIR: dataDir }, cwd).stdout).toContain("in 1 entry,");
    expect(lisa(["cache", "clear"], { LISA_DATA_DIR: dataDir }, cwd).stdout).toBe("lisa cache clear: removed 1 entry\n");
    expect(lisa(["cache", "clear", "../etc"], { LISA_DATA_DIR: dataDir }, cwd).status).toBe(2);
  });
});

describe("the repository's own files", () => {
  it("ignores the settings `lisa emulator --write-env` writes, which hold a private key's path and a webhook secret", () => {
    for (const file of ["lisa-emulator.env", ".env"]) {
      const ignored = spawnSync("git", ["check-ignore", "--no-index", "-q", file], { cwd: ROOT, encoding: "utf8" });
      expect(ignored.stderr).toBe("");
      expect(ignored.status, file).toBe(0);
    }
  });

  it("ships the license package.json names", () => {
    const { license } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { license: string };
    expect(license).toBe("MIT");
    expect(readFileSync(path.join(ROOT, "LICENSE"), "utf8")).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
  });
});

describe("lisa emulator where it is not shipped", () => {
  it("says the emulator belongs to the source checkout, as in the image, which copies src/ alone", () => {
    // The image's layout: package.json, node_modules and src/, without the top-level emulator/.
    const image = tempDir("lisa-image");
    cpSync(fileURLToPath(new URL("../../src", import.meta.url)), path.join(image, "src"), { recursive: true });
    cpSync(fileURLToPath(new URL("../../package.json", import.meta.url)), path.join(image, "package.json"));
    symlinkSync(fileURLToPath(new URL("../../node_modules", import.meta.url)), path.join(image, "node_modules"));
    const result = spawnSync(path.join(image, "src/cli/lisa.ts"), ["emulator"], {
      env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.stderr).toBe("lisa emulator: the emulator ships with the source checkout, not with this installation.\n");
    expect(result.status).toBe(2);
  });
});

describe("lisa config check with _extends", () => {
  it("checks the file's own keys and names the base it could not read offline", () => {
    const dir = tempDir("config-check");
    writeFileSync(
      path.join(dir, "lisa.yml"),
      "_extends: acme/settings:.github/lisa-base.yml\ngates:\n  - npm test\njudges:\n  - The README explains it.\n",
    );
    const { status, stdout } = lisa(["config", "check", "lisa.yml"], {}, dir);
    expect(status).toBe(0);
    expect(stdout).toContain("lisa.yml is valid: label `lisa`, 1 gate(s), 1 judge(s)");
    expect(stdout).toContain("It extends `acme/settings:.github/lisa-base.yml`, which was not read");
    // The key is Probot's, not Lisa's: any other unknown key is still refused.
    writeFileSync(path.join(dir, "lisa.yml"), "_extends: .github\nextends: .github\n");
    const bad = lisa(["config", "check", "lisa.yml"], {}, dir);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('Unrecognized key: "extends"');
  });
});

describe("lisa doctor --live", () => {
  it("asks GitHub, as the App, for itself, its installations and its permissions", async () => {
    const { privateKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    const configured = {
      APP_ID: "12345",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: "0123456789abcdef0123456789abcdef",
      GHE_PROTOCOL: "http",
    };
    const registered = async (
      permissions?: Record<string, "read" | "write">,
      more: Pick<Parameters<typeof createGitHubEmulator>[0], "events" | "registered" | "selectedRepos"> = {},
    ) => {
      const github = createGitHubEmulator({
        reposRoot: tempDir("doctor-live"),
        webhookSecret: "unused",
        ghes: true,
        ...(permissions ? { permissions } : {}),
        ...more,
      });
      await github.start();
      await github.createRepo("acme/api");
      await github.createRepo("acme/.github");
      return github;
    };
    const full = await registered();
    try {
      const { status, stdout } = await runLisaCommand(["doctor", "--live"], { ...configured, GHE_HOST: new URL(full.url).host });
      expect(stdout).toMatch(/^ok {4}App on GitHub +lisa, 1 installation\(s\)$/m);
      expect(stdout).toMatch(/^ok {4}App permissions +every one app\.yml asks for$/m);
      expect(stdout).toMatch(/^ok {4}App events +subscribed to every one app\.yml lists$/m);
      expect(stdout).toMatch(/^ok {4}installation acme +has accepted every permission and event$/m);
      expect(status).toBe(0);
    } finally {
      await full.stop();
    }
    // Registered before app.yml asked for check runs (and for the pull request's CI: statuses, Actions logs).
    const old = await registered({ contents: "write", issues: "write", pull_requests: "write", metadata: "read" });
    try {
      const { status, stdout } = await runLisaCommand(["doctor", "--live"], { ...configured, GHE_HOST: new URL(old.url).host });
      expect(stdout).toMatch(
        /^FAIL {2}App permissions +missing checks: write, statuses: read, actions: read\n +fix: Add them in the App's settings/m,
      );
      expect(status).toBe(1);
    } finally {
      await old.stop();
    }
    // Registered from an app.yml without review events: GitHub never sends them.
    const deaf = await registered(undefined, { events: ["issues", "issue_comment", "pull_request"] });
    try {
      const { status, stdout } = await runLisaCommand(["doctor", "--live"], { ...configured, GHE_HOST: new URL(deaf.url).host });
      expect(stdout).toMatch(
        /^FAIL {2}App events +not subscribed to pull_request_review, pull_request_review_comment, check_run, check_suite, status: GitHub never sends them.*\n +fix: Tick them/m,
      );
      expect(status).toBe(1);
    } finally {
      await deaf.stop();
    }
    // The App asks for check runs now; the installation's owner has not accepted that yet.
    const { checks: _, ...accepted } = grantedPermissions();
    const behind = await registered(accepted, { registered: { permissions: grantedPermissions() } });
    try {
      const { status, stdout } = await runLisaCommand(["doctor", "--live"], {
        ...configured,
        GHE_HOST: new URL(behind.url).host,
      });
      expect(stdout).toMatch(/^ok {4}App permissions /m);
      expect(stdout).toMatch(/^FAIL {2}installation acme +has not accepted checks: write\n +fix: Its owner must accept/m);
      expect(status).toBe(1);
    } finally {
      await behind.stop();
    }
    // Installed on selected repositories: the organization-wide config is read only if .github is one.
    for (const [selected, line] of [
      [
        ["acme/api"],
        /^warn {2}acme\/\.github +not in the installation, which has selected repositories: .*\n +fix: If acme keeps/m,
      ],
      [
        ["acme/api", "acme/.github"],
        /^ok {4}acme\/\.github +in the installation: an organization-wide \.github\/lisa\.yml there is read$/m,
      ],
    ] as const) {
      const github = await registered(undefined, { selectedRepos: selected });
      try {
        const { stdout } = await runLisaCommand(["doctor", "--live"], { ...configured, GHE_HOST: new URL(github.url).host });
        expect(stdout).toMatch(line);
      } finally {
        await github.stop();
      }
    }
    // Nothing answers there.
    const { status, stdout } = await runLisaCommand(["doctor", "--live"], { ...configured, GHE_HOST: "127.0.0.1:9" });
    expect(stdout).toMatch(/^FAIL {2}App on GitHub +http:\/\/127\.0\.0\.1:9\/api\/v3 answered .+\n +fix: Check the network/m);
    expect(status).toBe(1);
  });
});
