// Over 250 lines: the whole `.github/lisa.yml` schema, kept in one object that the docs test walks key by key.
import { z } from "zod";
import { type ProviderName, providers } from "../providers/registry.ts";
import { ALLOW_HOST_PATTERN } from "../sandbox/egress-rules.ts";
import { parseDuration } from "./parse-duration.ts";

/** Longest any one limit may be: a day. Beyond 24.8 days `setTimeout` overflows and fires at once. */
const MAX_DURATION_MS = 24 * 3_600_000;

const duration = (fallback: string) =>
  z
    .union([z.string(), z.number()])
    .prefault(fallback)
    .transform((value, ctx) => {
      const ms = parseDuration(value);
      if (ms === undefined) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a duration; write e.g. 45m, 90s or 1h30m` });
        return z.NEVER;
      }
      if (ms === 0) {
        ctx.addIssue({ code: "custom", message: `"${value}" is no time at all; a limit must be longer than 0` });
        return z.NEVER;
      }
      if (ms > MAX_DURATION_MS) {
        ctx.addIssue({ code: "custom", message: `"${value}" is longer than the most Lisa allows, 24h` });
        return z.NEVER;
      }
      return ms;
    });

/** Gates are commands, not scripts: a few of them, each a line. A config with 95,325 gates was accepted before. */
const MAX_GATES = 20;
const MAX_GATE_LENGTH = 1_000;
/** Set-up commands: a few lines that install and build, as gates are. */
const MAX_SETUP = 10;
/** Files whose contents key the set-up cache when `setup_cache.key` names none: the lockfiles and manifests of the common package managers. */
export const DEFAULT_SETUP_CACHE_KEY = [
  "package.json",
  "package-lock.json",
  "npm-shrinkwrap.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  "requirements.txt",
  "pyproject.toml",
  "uv.lock",
  "poetry.lock",
  "Pipfile.lock",
  "go.mod",
  "go.sum",
  "Cargo.lock",
  "Gemfile.lock",
];
const repoPath = z
  .string()
  .max(200)
  .regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[\w./@+-]+$/, "must be a path inside the repository, e.g. package-lock.json");
/** Repositories one issue's work may span. */
const MAX_REPOS = 20;
/** Hosts the sandbox may reach besides the model API: a few package registries, not the internet. */
const MAX_ALLOW_HOSTS = 30;
/** Where tests live in the common layouts: JavaScript, Python, Go, Ruby, Java and Rust. */
const DEFAULT_TEST_GLOBS = [
  "test/**",
  "tests/**",
  "spec/**",
  "__tests__/**",
  "**/*.test.*",
  "**/*.spec.*",
  "**/*_test.*",
  "**/test_*.py",
  "**/src/test/**",
];

const providerOptions = z.strictObject({
  /** Model name or alias passed to the CLI; the CLI's own default when omitted. */
  model: z.string().min(1).optional(),
});

const providerNames = Object.keys(providers) as ProviderName[];

/** One entry of the fallback chain, `{ claude: { model: sonnet } }`: one key, a name from the provider registry. */
const providerEntry = z
  .strictObject(
    Object.fromEntries(providerNames.map((name) => [name, providerOptions.optional()])) as Record<
      ProviderName,
      z.ZodOptional<typeof providerOptions>
    >,
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `${issue.keys.map((key) => `"${key}"`).join(", ")} is no provider Lisa runs; name one of ${providerNames.join(", ")}`
          : undefined,
    },
  )
  .refine((entry) => Object.keys(entry).length === 1, {
    message: "each entry names exactly one provider, e.g. `- claude: { model: sonnet }`",
    // An unknown name has been said already; this is for none or several known ones.
    when: (payload) => payload.issues.length === 0,
  })
  .transform((entry) => {
    const first = Object.entries(entry)[0] as [ProviderName, z.infer<typeof providerOptions> | undefined] | undefined;
    // Only an entry already refused above has none.
    if (!first) return z.NEVER;
    return { name: first[0], model: first[1]?.model };
  });

export type { ProviderName };

/** Judges are review criteria, a sentence each: a few of them, since each costs a model session per pass. */
const MAX_JUDGES = 10;
const MAX_CRITERION_LENGTH = 500;

/**
 * One judge: a criterion a second model answers PASS or FAIL on after the gates pass. A plain
 * string is short for `{ criterion: … }`.
 */
const judgeEntry = z.preprocess(
  (value) => (typeof value === "string" ? { criterion: value } : value),
  z.strictObject({
    /** What must hold of the change, in one or two sentences a reviewer would write. */
    criterion: z
      .string()
      .trim()
      .min(1)
      .max(MAX_CRITERION_LENGTH, `a criterion may be at most ${MAX_CRITERION_LENGTH} characters`),
    /** Globs from the repository's root: the judge runs only on a pass that changed a file matching one. */
    paths: z.array(z.string().min(1).max(200)).min(1).max(20).optional(),
    /** The provider that judges; by default another vendor than the one that wrote the code, from `providers`. */
    provider: providerEntry.optional(),
  }),
);

const repoEntry = z.strictObject({
  /** `owner/name` of a repository the work may change. */
  // Owners are letters, digits and hyphens; "." and ".." are no repository names, so no traversal.
  repo: z.string().regex(/^[A-Za-z0-9-]+\/(?!\.\.?$)[\w.-]+$/, "must be owner/name, e.g. acme/api"),
  /** One line for the planner: what lives in this repository. */
  description: z.string().max(500).default(""),
});

/** The schema of `.github/lisa.yml`. Every field has a default, so an empty file is valid. */
export const configSchema = z.strictObject({
  /** The issue label that asks Lisa to work on an issue. */
  label: z.string().min(1).max(50).default("lisa"),
  /** Agent CLIs in order of preference; the next one is tried when one is down. */
  providers: z
    .array(providerEntry)
    .min(1)
    .prefault([{ claude: {} }]),
  /**
   * Repositories the work may span. With more than one, a planning session decides which need
   * changes, in what order; without it, the issue's own repository is the only one.
   */
  repos: z
    .array(repoEntry)
    .min(1)
    .max(MAX_REPOS, `lists more than ${MAX_REPOS} repositories`)
    .refine((repos) => new Set(repos.map((r) => r.repo.toLowerCase())).size === repos.length, "lists a repository twice")
    .optional(),
  /** Branch the work starts from and pull requests target; the repository's default branch when omitted. */
  base_branch: z.string().min(1).optional(),
  /** Shell commands that must pass in the worktree before a pull request is opened or updated. */
  gates: z
    .array(z.string().min(1).max(MAX_GATE_LENGTH, `a gate may be at most ${MAX_GATE_LENGTH} characters`))
    .max(MAX_GATES, `at most ${MAX_GATES} gates`)
    .default([]),
  /**
   * Criteria no command can check, each answered PASS or FAIL with one sentence by a model session
   * after the gates pass; a FAIL goes back to the agent as a failing gate does (docs/judges.md).
   */
  judges: z
    .array(judgeEntry)
    .max(MAX_JUDGES, `at most ${MAX_JUDGES} judges`)
    .refine((judges) => new Set(judges.map((j) => j.criterion)).size === judges.length, "lists a criterion twice")
    .default([]),
  /**
   * Shell commands that prepare a fresh worktree (install dependencies, build), run in the sandbox
   * before the first agent session of a step. What they leave in ignored files (`node_modules/`,
   * `.venv/`) is cached and restored in later worktrees with the same key instead of running them again.
   */
  setup: z
    .array(z.string().min(1).max(MAX_GATE_LENGTH, `a set-up command may be at most ${MAX_GATE_LENGTH} characters`))
    .max(MAX_SETUP, `at most ${MAX_SETUP} set-up commands`)
    .default([]),
  /** The cache of what `setup` produced. */
  setup_cache: z
    .strictObject({
      /** Files whose contents, with the repository and the set-up commands, key the cache; a change to one runs set-up again. */
      key: z.array(repoPath).max(50, "at most 50 files").default(DEFAULT_SETUP_CACHE_KEY),
      /** False: set-up runs in every new worktree and nothing is stored. */
      enabled: z.boolean().default(true),
    })
    .prefault({}),
  limits: z
    .strictObject({
      /** Fresh-context agent invocations per step and pass, gate-fixing rounds included. */
      max_iterations: z.int().min(1).max(50).default(8),
      /** Wall-clock limit of one agent invocation. */
      session_timeout: duration("45m"),
      /** An agent that prints nothing for this long is considered stalled and killed. */
      stall_timeout: duration("10m"),
      /** Wall-clock limit of each set-up command. */
      setup_timeout: duration("15m"),
      /** Wall-clock limit of one gate command. */
      gate_timeout: duration("15m"),
      /** Agent spend per run after which Lisa stops invoking agents. */
      max_cost_usd: z.number().positive().default(20),
      /** Rounds of work a run may take: pass 1, then one per redirect, change request or continue. */
      max_passes: z.int().min(1).max(50).default(5),
    })
    .prefault({}),
  /**
   * The pull request's own CI (check runs, check suites, commit statuses on the head Lisa pushed):
   * Lisa waits for it before asking for review, and a failing check goes back to the agent.
   */
  ci: z
    .strictObject({
      /** False: Lisa asks for review without waiting for the pull request's CI. */
      wait: z.boolean().default(true),
      /** How long Lisa waits for checks still running; then review may start without them. */
      timeout: duration("30m"),
      /** Only these checks count (names of check runs or status contexts); the checks branch protection or a ruleset requires, else every check, when omitted. */
      checks: z.array(z.string().min(1).max(200)).max(50).optional(),
      /** Checks that never count (e.g. a slow deploy preview). */
      ignore: z.array(z.string().min(1).max(200)).max(50).default([]),
    })
    .prefault({}),
  /** What agents and gates may reach from their sandbox besides their model API. */
  sandbox: z
    .strictObject({
      /**
       * Hosts (`registry.npmjs.org`, `*.pythonhosted.org`, optionally `:port`; HTTPS and HTTP when
       * none) the agent, and gates with `gate_network`, may connect to through Lisa's egress proxy.
       * Names only: whatever they resolve to must be a public address.
       */
      allow_hosts: z
        .array(
          z.string().max(253).regex(ALLOW_HOST_PATTERN, "must be a host name, `*.name` or `name:port`, e.g. registry.npmjs.org"),
        )
        .max(MAX_ALLOW_HOSTS, `at most ${MAX_ALLOW_HOSTS} hosts`)
        .default([]),
      /** Gates may reach `allow_hosts` too; without it they run with no network at all. */
      gate_network: z.boolean().default(false),
    })
    .prefault({}),
  /** How humans review Lisa's pull requests, and what accepting them does. */
  review: z
    .strictObject({
      /**
       * `approval`: one approval from a writer per open pull request, at its current head.
       * `github`: GitHub's own review decision (required approvals, code owners) must say approved too.
       */
      accept: z.enum(["approval", "github"]).default("approval"),
      /** Show a multi-repository plan for review before building it: `/lisa proceed` builds it, `/lisa redirect` re-plans. */
      plan: z.boolean().default(false),
      /** The requester's own approval does not count, so someone else must review. */
      exclude_requester: z.boolean().default(false),
      /** `ready`: mark the PRs ready and leave merging to people. `merge`: Lisa merges the approved heads in plan order. */
      on_accept: z.enum(["ready", "merge"]).default("ready"),
      /** How `on_accept: merge` merges: `merge`, `squash` or `rebase`; unset, the first the repository allows, in that order. */
      merge_method: z.enum(["merge", "squash", "rebase"]).optional(),
      /** Keep pull requests as drafts while Lisa works on them; ready for review at the gate. */
      draft_until_review: z.boolean().default(true),
      /** `redirect`: a writer's "Request changes" review starts the next pass. `ignore`: it only blocks accepting. */
      changes_requested: z.enum(["redirect", "ignore"]).default("redirect"),
    })
    .prefault({}),
  /**
   * Anchors (docs/operations.md, What Lisa learns): the gates that passed and the test files the agent added or changed in a
   * delivered pass must keep passing in later passes. `anchors: strict` is short for `{ mode: strict }`.
   */
  anchors: z
    .preprocess(
      (value) => (typeof value === "string" ? { mode: value } : value),
      z.strictObject({
        /** `keep`: a broken or deleted anchor sends the step back; an edited one is named in the package. `strict`: editing one is refused too. `off`: no anchors. */
        mode: z.enum(["keep", "strict", "off"]).default("keep"),
        /** Globs of the repository's test files, matched against paths from its root. */
        tests: z.array(z.string().min(1).max(200)).min(1).max(50).default(DEFAULT_TEST_GLOBS),
      }),
    )
    .prefault({}),
  /**
   * Memory per repository (docs/operations.md, What Lisa learns): short learnings from reviewers' addressed guidance, gate
   * failures Lisa saw fixed and the human commits it kept, in a file humans review like code.
   * Lisa reads the file from the default branch into every prompt whenever it exists.
   */
  memory: z
    .strictObject({
      /**
       * `run_pr`: a pass that learned something adds it to the file in its own pull request. `own_pr`:
       * at acceptance, what the whole run taught goes to each repository in a pull request of Lisa's
       * own. `off` (the default, as `own_pr` opens a pull request more per run): Lisa proposes nothing.
       */
      propose: z.enum(["run_pr", "own_pr", "off"]).default("off"),
      /** The memory file, from the repository's root. */
      file: z
        .string()
        .regex(/^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[\w./-]+$/, "must be a path inside the repository, e.g. .github/lisa/memory.md")
        .max(200)
        .default(".github/lisa/memory.md"),
      /** Learnings the file keeps; the oldest go first. */
      max_lines: z.int().min(1).max(200).default(40),
    })
    .prefault({}),
});

export type LisaConfig = z.infer<typeof configSchema>;
export type ProviderChoice = LisaConfig["providers"][number];
export type JudgeConfig = LisaConfig["judges"][number];
