import nock from "nock";
import { afterEach, beforeEach, expect } from "vitest";
import { type FakeGitHubOptions, fakeGitHub, type Route } from "./fake-github.ts";
import { createRemote, tempDir } from "./git-fixtures.ts";
import type { Harness } from "./lisa-harness.ts";
import { OWNER, REPO, TOKEN } from "./lisa-harness.ts";

/** The scripted model server, on loopback, which Lisa's egress proxy (in this process) reaches for sandboxed CLIs. */
const MODEL_SERVER = /^http:\/\/127\.0\.0\.1:\d+\//;

/** The current test's bare repository for the example payload's repository, made before each test. */
let helloWorldRemote: string | undefined;

/**
 * Per-test set-up of the integration suites: no network but loopback, a fresh bare "GitHub" remote for the
 * example payload's repository, and Lisa stopped and mocks cleared afterwards. A request to GitHub
 * that no route of the fake answers fails the test, even where Lisa catches the error it gets
 * (a tracking-comment edit, a label): a test must not pass while Lisa talks to nothing.
 */
export function useIntegrationContext() {
  const unmatched: string[] = [];
  const noMatch = (request: { method?: string; path?: string; href?: string; url?: string }) => {
    const url = request.path ?? request.href ?? request.url ?? "?";
    // Lisa's egress proxy runs in this process: what it forwards to the scripted model server is no GitHub request.
    if (MODEL_SERVER.test(url)) return;
    unmatched.push(`${request.method ?? "?"} ${url}`);
  };
  const context = {
    remoteRoot: "",
    harness: undefined as Harness | undefined,
    /** Registers a harness to be stopped after the test, and returns it. */
    use(harness: Harness): Harness {
      context.harness = harness;
      return harness;
    },
  };
  beforeEach(() => {
    unmatched.length = 0;
    nock.emitter.on("no match", noMatch);
    nock.disableNetConnect();
    nock.enableNetConnect((host) => MODEL_SERVER.test(`http://${host}/`));
    context.remoteRoot = tempDir("remote");
    helloWorldRemote = createRemote(context.remoteRoot, `${OWNER}/${REPO}`, "master", { "README.md": "# Hello Wrold\n" });
  });
  afterEach(async () => {
    await context.harness?.lisa.stop();
    context.harness = undefined;
    helloWorldRemote = undefined;
    nock.emitter.removeListener("no match", noMatch);
    nock.cleanAll();
    nock.enableNetConnect();
    expect(unmatched, "requests to GitHub that the fake has no route for").toEqual([]);
  });
  return context;
}

/**
 * The fake GitHub for the example payload's repository and installation, backed by the bare
 * repository `useIntegrationContext` made for this test (pull request heads are read from it).
 */
export function fakeHelloWorld(options: Omit<FakeGitHubOptions, "owner" | "repo" | "installationId" | "token" | "gitDir">) {
  if (helloWorldRemote === undefined) throw new Error("fakeHelloWorld needs useIntegrationContext in the test file");
  return fakeGitHub({ owner: OWNER, repo: REPO, installationId: 2, token: TOKEN, gitDir: helloWorldRemote, ...options });
}

/** Every route a run uses that ends before it opens a pull request (it fails or blocks): label to last comment. */
export const NO_PR_ROUTES = [
  "token",
  "config",
  "permission",
  "reactions",
  "comments",
  "comment-update",
  "label-read",
  "label-add",
  "label-set",
] as const satisfies readonly Route[];

/** Every route a run that delivers a pull request uses, from the label to the review gate. */
export const DELIVERY_ROUTES = [
  ...NO_PR_ROUTES,
  "pulls",
  "pull-read",
  "reviews",
  "reviewers",
  "checks",
] as const satisfies readonly Route[];
