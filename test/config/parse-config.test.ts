import { describe, expect, it } from "vitest";
import { labelOf, parseConfig, parseConfigYaml } from "../../src/config/parse-config.ts";
import { parseDuration } from "../../src/config/parse-duration.ts";
import { ConfigError } from "../../src/errors.ts";

describe("parseConfig", () => {
  it("gives every default for a missing or empty file", () => {
    for (const raw of [null, {}]) {
      expect(parseConfig(raw)).toEqual({
        label: "lisa",
        providers: [{ name: "claude", model: undefined }],
        gates: [],
        judges: [],
        setup: [],
        setup_cache: {
          enabled: true,
          key: expect.arrayContaining([
            "package-lock.json",
            "pnpm-lock.yaml",
            "yarn.lock",
            "uv.lock",
            "go.sum",
            "Cargo.lock",
            "Gemfile.lock",
          ]),
        },
        ci: { wait: true, timeout: 1_800_000, ignore: [] },
        limits: {
          max_iterations: 8,
          session_timeout: 45 * 60_000,
          stall_timeout: 10 * 60_000,
          setup_timeout: 15 * 60_000,
          gate_timeout: 15 * 60_000,
          max_cost_usd: 20,
          max_passes: 5,
        },
        review: {
          accept: "approval",
          plan: false,
          exclude_requester: false,
          on_accept: "ready",
          draft_until_review: true,
          changes_requested: "redirect",
        },
        sandbox: { allow_hosts: [], gate_network: false },
        anchors: {
          mode: "keep",
          tests: expect.arrayContaining(["test/**", "tests/**", "spec/**", "**/*.test.*", "**/*_test.*", "**/test_*.py"]),
        },
        memory: { propose: "off", file: ".github/lisa/memory.md", max_lines: 40 },
      });
    }
  });

  it("keeps set-up cache key files inside the repository, and bounds set-up commands as gates are", () => {
    expect(
      parseConfigYaml("setup: [npm ci]\nsetup_cache:\n  key: [package-lock.json, web/pnpm-lock.yaml]\n").setup_cache.key,
    ).toEqual(["package-lock.json", "web/pnpm-lock.yaml"]);
    for (const file of ["/etc/passwd", "../package-lock.json", "a/../../b.lock"])
      expect(() => parseConfigYaml(`setup_cache:\n  key: [${file}]\n`)).toThrow(/setup_cache/);
    expect(() => parseConfigYaml(`setup:\n${"  - npm ci\n".repeat(11)}`)).toThrow(/at most 10 set-up commands/);
    expect(parseConfigYaml("limits:\n  setup_timeout: 30m\n").limits.setup_timeout).toBe(30 * 60_000);
  });

  it("reads judges, a plain string as the criterion, with their paths and provider", () => {
    const config = parseConfigYaml(
      [
        "judges:",
        "  - The README explains every new option.",
        "  - criterion: Screenshots show the form's errors beside their fields.",
        "    paths: ['src/ui/**', 'screenshots/**']",
        "    provider: { gemini: { model: gemini-2.5-pro } }",
        "",
      ].join("\n"),
    );
    expect(config.judges).toEqual([
      { criterion: "The README explains every new option." },
      {
        criterion: "Screenshots show the form's errors beside their fields.",
        paths: ["src/ui/**", "screenshots/**"],
        provider: { name: "gemini", model: "gemini-2.5-pro" },
      },
    ]);
  });

  it("bounds judges as gates are: how many, how long, no criterion twice, known providers only", () => {
    expect(() => parseConfigYaml(`judges:\n${Array.from({ length: 11 }, (_, i) => `  - Criterion ${i}.\n`).join("")}`)).toThrow(
      /at most 10 judges/,
    );
    expect(() => parseConfigYaml(`judges:\n  - ${"x".repeat(501)}\n`)).toThrow(/a criterion may be at most 500 characters/);
    expect(() => parseConfigYaml("judges:\n  - Same.\n  - Same.\n")).toThrow(/lists a criterion twice/);
    expect(() => parseConfigYaml("judges:\n  - '   '\n")).toThrow(/judges/);
    expect(() => parseConfigYaml("judges:\n  - criterion: Fine.\n    provider: { codex: {} }\n")).toThrow(
      /"codex" is no provider Lisa runs/,
    );
    expect(() => parseConfigYaml("judges:\n  - criterion: Fine.\n    pahts: [a]\n")).toThrow(/pahts/);
  });

  it("keeps the memory file inside the repository", () => {
    expect(parseConfigYaml("memory:\n  propose: run_pr\n  file: docs/lisa.md\n").memory).toEqual({
      propose: "run_pr",
      file: "docs/lisa.md",
      max_lines: 40,
    });
    // Or through a pull request of Lisa's own at acceptance.
    expect(parseConfigYaml("memory:\n  propose: own_pr\n").memory.propose).toBe("own_pr");
    for (const file of ["/etc/passwd", "../memory.md", "a/../../b.md", "a/./b.md"])
      expect(() => parseConfigYaml(`memory:\n  file: ${file}\n`)).toThrow(/memory/);
  });

  it("reads `anchors: strict` as the strict mode with the default test globs, and its own globs", () => {
    expect(parseConfigYaml("anchors: strict\n").anchors).toMatchObject({
      mode: "strict",
      tests: expect.arrayContaining(["test/**"]),
    });
    expect(parseConfigYaml("anchors:\n  tests: ['checks/**']\n").anchors).toEqual({ mode: "keep", tests: ["checks/**"] });
    expect(() => parseConfigYaml("anchors: sometimes\n")).toThrow(/anchors/);
  });

  it("reads the hosts the sandbox may reach, and refuses IP literals, URLs and too many hosts", () => {
    const config = parseConfigYaml(
      "sandbox:\n  allow_hosts: [registry.npmjs.org, '*.pythonhosted.org', 'proxy.golang.org:443']\n  gate_network: true\n",
    );
    expect(config.sandbox).toEqual({
      allow_hosts: ["registry.npmjs.org", "*.pythonhosted.org", "proxy.golang.org:443"],
      gate_network: true,
    });
    for (const host of [
      "127.0.0.1",
      "169.254.169.254:80",
      "https://registry.npmjs.org",
      "[::1]",
      "*",
      "localhost",
      "x.example:0",
      "x.example:65536",
      "x.example:99999",
    ])
      expect(() => parseConfigYaml(`sandbox:\n  allow_hosts: ['${host}']\n`)).toThrow(/allow_hosts/);
    const many = Array.from({ length: 31 }, (_, i) => `- host${i}.example.com`).join("\n    ");
    expect(() => parseConfigYaml(`sandbox:\n  allow_hosts:\n    ${many}\n`)).toThrow(/at most 30 hosts/);
  });

  it("reads the documented example", () => {
    const config = parseConfigYaml(
      "label: ai\nproviders:\n  - claude: { model: sonnet }\nbase_branch: develop\ngates:\n  - npm test\nlimits:\n  max_iterations: 3\n  session_timeout: 1h30m\n  max_cost_usd: 2.5\n",
    );
    expect(config).toMatchObject({
      label: "ai",
      providers: [{ name: "claude", model: "sonnet" }],
      base_branch: "develop",
      gates: ["npm test"],
      limits: { max_iterations: 3, session_timeout: 90 * 60_000, max_cost_usd: 2.5 },
    });
  });

  it.each([
    [{ label: "" }, "→ at label"],
    [{ providers: [] }, "→ at providers"],
    [{ providers: [{}] }, "each entry names exactly one provider"],
    [{ providers: [{ copilot: {} }] }, '"copilot" is no provider Lisa runs; name one of claude, gemini, opencode'],
    [{ providers: [{ claude: { model: 3 } }] }, "→ at providers[0].claude.model"],
    [{ gates: "npm test" }, "→ at gates"],
    [{ limits: { max_iterations: 0 } }, "→ at limits.max_iterations"],
    [{ limits: { max_iterations: 2.5 } }, "→ at limits.max_iterations"],
    [{ limits: { session_timeout: "soon" } }, '"soon" is not a duration'],
    [{ limits: { max_cost_usd: -1 } }, "→ at limits.max_cost_usd"],
    [{ repos: [] }, "→ at repos"],
    [{ repos: [{ repo: "../etc" }] }, "must be owner/name"],
    [{ repos: [{ repo: "a/b" }, { repo: "A/B" }] }, "lists a repository twice"],
    [{ gates: Array.from({ length: 21 }, (_, i) => `test ${i}`) }, "at most 20 gates"],
    [{ gates: ["x".repeat(1_001)] }, "a gate may be at most 1000 characters"],
    [{ repos: Array.from({ length: 21 }, (_, i) => ({ repo: `acme/r${i}` })) }, "lists more than 20 repositories"],
    [{ limits: { session_timeout: "30d" } }, "is not a duration"],
    [{ limits: { gate_timeout: "25h" } }, '"25h" is longer than the most Lisa allows, 24h'],
    [{ limits: { stall_timeout: 2_200_000 } }, "is longer than the most Lisa allows, 24h"],
    [{ limits: { stall_timeout: "0s" } }, '"0s" is no time at all; a limit must be longer than 0'],
  ])("rejects %j, naming the key: %s", (raw, expected) => {
    expect(() => parseConfig(raw)).toThrow(ConfigError);
    expect(() => parseConfig(raw)).toThrow(expected);
  });

  it("names an unknown provider once, with the three it could be", () => {
    const message = (() => {
      try {
        parseConfig({ providers: [{ codex: {} }] });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain('"codex" is no provider Lisa runs; name one of claude, gemini, opencode');
    expect(message).not.toContain("each entry names exactly one provider");
  });

  it("reports a YAML syntax error as a ConfigError", () => {
    expect(() => parseConfigYaml("label: [unclosed")).toThrow(/is not valid YAML/);
  });
});

describe("labelOf", () => {
  it("finds the label of a config that is otherwise invalid, or the default", () => {
    expect(labelOf({ label: "ai", limits: "bad" })).toBe("ai");
    expect(labelOf({ label: 5 })).toBe("lisa");
    expect(labelOf(null)).toBe("lisa");
  });
});

describe("parseDuration", () => {
  it.each([
    ["45m", 2_700_000],
    ["90s", 90_000],
    ["1h30m", 5_400_000],
    ["250ms", 250],
    ["120", 120_000],
    [30, 30_000],
    ["0s", 0],
  ])("reads %j as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "soon", "5 minutes", "m5", "1h 30m", -5])("rejects %j", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
