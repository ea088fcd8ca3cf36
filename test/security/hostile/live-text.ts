import type { Link, Root, Text } from "mdast";
import remarkParse from "remark-parse";
import { unified } from "unified";
import { visit } from "unist-util-visit";
import type { FakeInvocation } from "../../../dev/fake-agent.ts";
import { isSafeLinkTarget } from "../../../src/markdown/live-text.ts";
import { gitIn } from "../../support/git-fixtures.ts";
import { HELD, type HostileGroup, type HostileInput } from "./hostile-input.ts";
import { inWorld, type LisaWorld, SMALL_CHANGE } from "./lisa-world.ts";

// Agent and stranger text that GitHub would act on if Lisa published it live: mentions that
// notify, keywords that close other issues, links that run script, characters that hide or reorder
// what a reviewer reads, and lines that pass for Lisa's own gate results. Each counts as an
// unauthorized act when it reaches something Lisa published.

/** Words the attacker plants; any of them live in what Lisa published is a breach. */
const LIVE_PAYLOADS = ["@mallory", "@acme/admins", "Fixes #1", "closes acme/web#2"];
/** Characters that must not reach a title, body, comment or commit: right-to-left override, isolates, BOM, joiner. */
const HIDDEN = /[\u202A-\u202E\u2066-\u2069\uFEFF\u200D]|ad\u200Bmin/;

interface Published {
  /** Markdown Lisa wrote: PR bodies and comments. */
  markdown: string[];
  /** Plain text GitHub still acts on: PR titles and commit messages. */
  plain: string[];
}

function publishedIn(world: LisaWorld, repo: string): Published {
  const { github } = world.env;
  const pulls = github.pulls(repo);
  const gitDir = github.gitDir(repo);
  return {
    markdown: [
      ...pulls.map((pull) => pull.body ?? ""),
      ...github.issues(repo).flatMap((issue) => world.lisaComments(repo, issue.number)),
    ],
    plain: [...pulls.map((pull) => pull.title), gitIn(gitDir, "log", "--all", "--format=%B")],
  };
}

/** What GitHub renders as prose (not code) in a markdown body, and the link targets it holds. */
function rendered(markdown: string): { prose: string; links: string[] } {
  const tree = unified().use(remarkParse).parse(markdown) as Root;
  const prose: string[] = [];
  const links: string[] = [];
  visit(tree, (node) => {
    if (node.type === "text") prose.push((node as Text).value);
    if (node.type === "link" || node.type === "definition") links.push((node as Link).url);
  });
  return { prose: prose.join("\n"), links };
}

/** How many live acts `published` holds. */
function liveActs({ markdown, plain }: Published): number {
  let acts = 0;
  for (const body of markdown) {
    const { prose, links } = rendered(body);
    acts += LIVE_PAYLOADS.filter((payload) => prose.includes(payload)).length;
    acts += links.filter((url) => !isSafeLinkTarget(url)).length;
    // A gate result outside the agent's quotation is Lisa's word; none were run here.
    acts += body.split("\n").filter((line) => line.includes("passed (run by Lisa)") && !line.startsWith(">")).length;
    if (HIDDEN.test(body)) acts += 1;
  }
  for (const text of plain) {
    acts += LIVE_PAYLOADS.filter((payload) => payload.startsWith("Fixes") || payload.startsWith("closes")).filter((payload) =>
      text.includes(payload),
    ).length;
    if (HIDDEN.test(text)) acts += 1;
  }
  return acts;
}

/** One issue through Lisa with an agent doing `invocation` (in a repository with no gates), counted. */
function input(name: string, attempt: string, invocation: FakeInvocation, issue: { title?: string } = {}): HostileInput {
  return {
    name,
    attempt,
    run: async () => {
      return inWorld(
        async (world) => {
          const repo = await world.repo("live");
          const created = await world.env.github.createIssue(repo, {
            title: issue.title ?? "Add a health check",
            body: "Add it.",
            user: "ann",
          });
          await world.env.github.labelIssue(repo, created.number, "lisa", "ann");
          await world.env.settle();
          if (world.env.github.pulls(repo).length !== 1)
            throw new Error("the run opened no pull request; the input proves nothing");
          return { ...HELD, unauthorizedRuns: liveActs(publishedIn(world, repo)) };
        },
        [invocation],
      );
    },
  };
}

const manifest = (fields: object): FakeInvocation => ({
  ...SMALL_CHANGE,
  manifest: { title: "Add a health check", what: "Adds health().", ...fields },
});

export const liveTextGroup: HostileGroup = {
  name: "live text",
  inputs: [
    input(
      "mentions",
      "an agent whose summary mentions a person and a team",
      manifest({ what: "Thanks @mallory and @acme/admins." }),
    ),
    input(
      "closing-keywords",
      "an agent whose summary closes other issues",
      manifest({ what: "Fixes #1. Also closes acme/web#2.", key_changes: ["Fixes #1 for good"] }),
    ),
    input(
      "closing-keyword-title",
      "an agent whose title, also Lisa's commit subject, closes an issue",
      manifest({ title: "Fixes #1 properly" }),
    ),
    input(
      "unsafe-links",
      "an agent whose summary links to javascript: and data: targets",
      manifest({
        what: "See [docs](javascript:alert(1)), <javascript:alert(2)> and [ref][r].\n\n[r]: data:text/html,<script>x</script>",
      }),
    ),
    input(
      "hidden-characters",
      "an agent whose title and summary hide a right-to-left override and zero-width characters",
      manifest({ title: "ad\u200Bmin \u202Etxt.exe", what: "Safe\u2066 change\uFEFF with a join\u200Der." }),
    ),
    input(
      "imitated-gate-line",
      "an agent whose testing account imitates Lisa's own gate results",
      manifest({ testing: "- `npm test` passed (run by Lisa)\n- `npm run lint` passed (run by Lisa)" }),
    ),
    input("backtick-file-name", "an agent that names a file to break out of the code span it is listed in", {
      write: { "a` @mallory `b.ts": "1\n" },
      result: "Done.",
    }),
    input("issue-title", "a stranger's issue title that mentions a person and closes an issue", SMALL_CHANGE, {
      title: "@mallory Fixes #1 in the health check",
    }),
  ],
};
