import { afterEach, describe, expect, it } from "vitest";
import type { EmulatedLisa } from "../../dev/emulated-lisa.ts";
import type { FakeInvocation } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { CONFIG, change as changeFile, REPO, runOf, passOne as startPassOne } from "../support/pass-one.ts";

// What reviewers read on GitHub is the truth (issue 24): the pull request says when it was
// accepted, and Lisa holds to GitHub's API where it is stricter than a naive client expects, as
// the emulator plays it: replies go to a thread's first comment only, and a pull request shows a
// push to its branch a moment late.

/** pass 1's session writes `text` to health.ts. */
const change = (text: string, manifest: object = {}) => changeFile("health.ts", text, manifest);

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

const passOne = (invocations: FakeInvocation[], config = CONFIG) =>
  startPassOne(invocations, config, (started) => {
    env = started;
  });

describe("the pull request at acceptance", () => {
  it("says after how many passes it was accepted, and its last pass reads accepted; the pass-2 package links its comparison", async () => {
    const { github, pull, env: e } = await passOne([change("ok"), change("v2")]);
    await github.commentOnIssue(REPO, pull.number, "/lisa redirect make it v2", "ann");
    await e.settle();
    await github.submitReview(REPO, pull.number, { state: "APPROVED", body: "", user: "bob" });
    await e.settle();

    expect((await runOf(e)).state).toBe("accepted");
    // The pass-2 package links GitHub's comparison of the pass's commits.
    const head = github.pulls(REPO)[0]?.head.sha ?? "";
    const pass2 = github.comments(REPO, pull.number).find((c) => c.body.includes("<!-- lisa:pass run=1 pass=2 "))?.body;
    expect(pass2).toContain(`([compare](${github.url}/${REPO}/compare/${pull.head.sha}...${head}))`);
    const body = github.pulls(REPO)[0]?.body ?? "";
    expect(body).toContain("✅ Accepted after 2 passes.");
    const rows = body.split("\n").filter((line) => /^\| [12] \|/.test(line));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/\| delivered \|$/);
    expect(rows[1]).toMatch(/\| ✅ accepted \|$/);
  });
});

describe("an acceptance withdrawn (rules 18, 19)", () => {
  const report = (github: EmulatedLisa["github"]) =>
    github.comments(REPO, 1).find((c) => c.body.includes("<!-- lisa:report run=1 -->"))?.body ?? "";
  // As a reader sees it: the zero-width spaces that keep a reference from linking are invisible.
  const tracking = (github: EmulatedLisa["github"]) =>
    (github.comments(REPO, 1).find((c) => c.body.includes("lisa:tracking"))?.body ?? "").replace(/\u200b/g, "");

  it("by a dismissed approval: the tracking comment says why, the report and the PR body stop saying accepted, until approved again", async () => {
    const { github, pull, env: e } = await passOne([change("ok")]);
    const approval = await github.submitReview(REPO, pull.number, { state: "APPROVED", body: "", user: "bob" });
    await e.settle();
    expect((await runOf(e)).state).toBe("accepted");
    expect(report(github)).toContain("✅ Accepted");
    expect(github.pulls(REPO)[0]?.body).toContain("✅ Accepted after 1 pass.");

    const reviewId = (approval.payload.review as { id: number }).id;
    await github.dismissReview(REPO, pull.number, reviewId, { user: "ann", message: "Not yet" });
    await e.settle();
    expect((await runOf(e)).state).toBe("review");
    expect(tracking(github)).toContain(`⚠️ Acceptance withdrawn: @ann dismissed @bob's approval on ${REPO}#${pull.number}.`);
    expect(report(github)).toContain("⚠️ Acceptance withdrawn");
    expect(report(github)).not.toContain("✅ Accepted");
    expect(github.pulls(REPO)[0]?.body).not.toContain("Accepted after");
    expect(github.comments(REPO, 1).filter((c) => c.body.includes("<!-- lisa:report run=1 -->"))).toHaveLength(1);

    await github.submitReview(REPO, pull.number, { state: "APPROVED", body: "", user: "bob" });
    await e.settle();
    expect((await runOf(e)).state).toBe("accepted");
    expect(report(github)).toContain("✅ Accepted");
    expect(tracking(github)).not.toContain("Acceptance withdrawn");
    expect(github.pulls(REPO)[0]?.body).toContain("✅ Accepted after 1 pass.");
  });

  it("by a human push after it: the tracking comment names the push, and shows it at once (rule 19)", async () => {
    const { github, pull, env: e } = await passOne([change("ok")]);
    await github.submitReview(REPO, pull.number, { state: "APPROVED", body: "", user: "bob" });
    await e.settle();
    expect((await runOf(e)).state).toBe("accepted");
    const { sha } = await github.pushCommit(REPO, pull.head.ref, {
      files: { "NOTES.md": "late\n" },
      message: "A late note",
      user: "bob",
    });
    await e.settle();
    expect((await runOf(e)).state).toBe("review");
    expect(tracking(github)).toContain(`⚠️ Acceptance withdrawn: @bob pushed \`${sha.slice(0, 7)}\` to ${REPO}#${pull.number}.`);
    // The push itself is on the issue now, not only in the next pass's package (rule 19).
    const range = `${pull.head.sha.slice(0, 7)}..${sha.slice(0, 7)}`;
    expect(tracking(github)).toContain(
      `Since pass 1: @bob pushed \`${range}\` to ${REPO}#${pull.number}; the next pass builds on it.`,
    );
    expect(report(github)).toContain("⚠️ Acceptance withdrawn");
  });
});

describe("commands said twice", () => {
  it("answers a bare /lisa right after /lisa help: other words are another request, not a flood", async () => {
    const { github, env: e } = await passOne([change("ok")]);
    const answers = () =>
      github.comments(REPO, 1).filter((c) => c.body.includes("<!-- lisa:reply") && c.body.includes("/lisa redirect"));
    await github.commentOnIssue(REPO, 1, "/lisa help", "ann");
    await github.commentOnIssue(REPO, 1, "/lisa", "ann");
    // The same words again within the window are one request, answered once.
    await github.commentOnIssue(REPO, 1, "/lisa", "ann");
    await e.settle();
    expect(answers()).toHaveLength(2);
  });
});

describe("a blocked step", () => {
  it("links the work in progress on its branch from the package, and says a gate that printed nothing did so", async () => {
    const config = "label: lisa\ngates:\n  - grep -qx ok health.ts\nlimits:\n  max_iterations: 2\n";
    const { github, pull, env: e } = await passOne([change("ok"), change("broken"), change("still broken")], config);
    await github.commentOnIssue(REPO, pull.number, "/lisa redirect break it", "ann");
    await e.settle();
    expect((await runOf(e)).state).toBe("blocked");

    const wip = `${pull.head.ref}--wip`;
    expect(await github.readFile(REPO, "health.ts", wip)).toBe("still broken\n");
    const pass2 = github.comments(REPO, pull.number).find((c) => c.body.includes("<!-- lisa:pass run=1 pass=2 "))?.body ?? "";
    expect(pass2).toContain(`**Work in progress:** \`${wip}\` ([browse](${github.url}/${REPO}/tree/${wip}))`);
    const tracking = github.comments(REPO, 1).find((c) => c.body.includes("lisa:tracking"))?.body ?? "";
    expect(tracking).toContain(
      `**Gate failure** in ${REPO}: \`grep -qx ok health.ts\`\n\n_It failed without printing anything._`,
    );
  });
});

describe("a pass started on the pull request", () => {
  it("answers with its own comment, opened at once and edited into the package: one Lisa comment per pass", async () => {
    const agent = [change("ok"), { ...change("v2"), run: ["sleep 2"] }];
    const { github, pull, env: e } = await passOne(agent);
    await github.commentOnIssue(REPO, pull.number, "/lisa redirect make it v2", "ann");
    const passTwo = () => github.comments(REPO, pull.number).filter((c) => c.body.includes("<!-- lisa:pass run=1 pass=2 "));
    // Opened as the redirect is handled, while the agent still works.
    await waitFor("pass 2's comment", () => passTwo().length > 0, 30_000);
    expect(passTwo()[0]?.body).toContain("⏳ Pass 2 started by @ann's redirect");
    expect((await runOf(e)).state).not.toBe("review");
    await e.settle();

    const lisas = github.comments(REPO, pull.number).filter((c) => c.user.login === "lisa[bot]");
    expect(lisas.map((c) => /<!-- lisa:pass run=1 pass=(\d) /.exec(c.body)?.[1] ?? c.body.slice(0, 60))).toEqual(["1", "2"]);
    expect(passTwo()[0]?.body).toContain("👀 ready for review");
  });
});

describe("Lisa against GitHub's stricter edges", () => {
  it("answers guidance written as a reply in a thread under the thread's first comment, once though GitHub's answer was lost", async () => {
    const {
      github,
      pull,
      env: e,
    } = await passOne([change("ok"), change("JSON", { guidance: [{ id: "g1", status: "addressed", note: "JSON now" }] })]);
    const first = await github.commentInline(REPO, pull.number, {
      path: "health.ts",
      line: 1,
      body: "Is this JSON?",
      user: "bob",
    });
    const root = (first.payload.comment as { id: number }).id;
    // GitHub creates the answer, and its reply to Lisa is lost: Lisa must find it, not write another.
    github.injectFault({ method: "POST", path: /\/comments\/\d+\/replies$/, kind: "lost_answer" });
    await github.commentInline(REPO, pull.number, {
      path: "health.ts",
      line: 1,
      body: "/lisa redirect return JSON here",
      user: "ann",
      inReplyTo: root,
    });
    await e.settle();
    // The lost answer stops the pass for a moment, as any GitHub failure at its gate does; it goes on from the store.
    expect((await runOf(e)).state).toBe("review");
    expect(github.comments(REPO, (await runOf(e)).issue_number).some((c) => c.body.includes("❌ Failed"))).toBe(false);
    const answers = github.reviewComments(REPO, pull.number).filter((c) => c.user.login === "lisa[bot]");
    expect(answers.map((c) => c.in_reply_to_id)).toEqual([root]);
    expect(answers[0]?.body).toContain("addressed: JSON now");
    // The answer's first write was made and its reply lost; none was sent to a reply (422).
    const statuses = github
      .requests()
      .filter((r) => r.path.endsWith("/replies"))
      .map((r) => r.status);
    expect(statuses[0]).toBe(502);
    expect(statuses).not.toContain(422);
  });

  it("records the commit it pushed, and reports its check there, while the pull request still shows the one before", async () => {
    const { github, pull, env: e } = await passOne([change("ok"), change("v2")]);
    const before = pull.head.sha;
    github.lagPullHeads(60_000);
    await github.commentOnIssue(REPO, pull.number, "/lisa redirect make it v2", "ann");
    await e.settle();

    const pushed = gitIn(github.gitDir(REPO), "rev-parse", pull.head.ref).trim();
    expect(pushed).not.toBe(before);
    // GitHub still shows pass 1's head; Lisa knows better.
    expect(github.pulls(REPO)[0]?.head.sha).toBe(before);
    const run = await runOf(e);
    expect(run.state).toBe("review");
    const [step] = (await e.lisa.store.steps.of(run.id)).filter((s) => s.position > 0);
    expect(step?.head_sha).toBe(pushed);
    const history = await e.lisa.store.steps.history(step?.id ?? 0);
    expect(history.map((record) => record.end_sha)).toEqual([before, pushed]);
    const checks = github.checkRuns(REPO).filter((check) => check.name === "Lisa");
    expect(checks.find((check) => check.head_sha === pushed)).toMatchObject({ status: "completed", conclusion: "success" });
    // Pass 1's check is pass 1's: not rewritten with pass 2's report.
    expect(checks.find((check) => check.head_sha === before)?.output.summary).toContain("Pass 1");
  });
});
