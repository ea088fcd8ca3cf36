import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { useLisaChildren } from "../support/lisa-child.ts";

// GitHub never delivers a webhook again on its own: one sent while no Lisa answered (a deploy's
// gap, a crash) is lost unless the next Lisa asks for it from the App's delivery log.

const SECRET = "redeliver-at-start-secret-of-at-least-32-bytes";
const REPO = "acme/api";
const lisa = useLisaChildren(SECRET);

describe("webhooks sent while Lisa was down", () => {
  it("are asked for again by the next Lisa on the same data until answered, never one the first Lisa took, and the label sent meanwhile starts its run", async () => {
    const agent = createFakeClaude([]);
    const github = await lisa.emulator();
    await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
    github.addCollaborator(REPO, "ann", "write");
    const dataDir = path.join(tempDir("redeliver-data"), "lisa");
    const first = await lisa.start({ dataDir, claudeBinary: agent.binary });
    // Something reaches the store, so the next Lisa knows from when it may have missed webhooks.
    const seen = await github.createIssue(REPO, { title: "Seen", body: "", user: "ann" });
    await github.commentOnIssue(REPO, seen.number, "/lisa help", "ann");
    await waitFor("Lisa's answer to /lisa help", () => github.comments(REPO, seen.number).length > 1, 30_000);

    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    const missed = await github.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    const lost = await github.labelIssue(REPO, missed.number, "lisa", "ann");
    expect(lost.status).toBeNull();
    expect(github.reactions(REPO, missed.number)).toEqual([]);

    // Everything sent while no Lisa answered: the label, the issue's opening, Lisa's own last comment.
    const lostIds = new Set(
      github
        .deliveries()
        .filter((d) => !d.redelivery && d.status === null)
        .map((d) => d.id),
    );
    expect(lostIds.has(lost.id)).toBe(true);

    await lisa.start({ dataDir, claudeBinary: agent.binary });
    await waitFor("the 👀 on the label sent while Lisa was down", () => github.reactions(REPO, missed.number).length > 0, 30_000);
    const answered = (id: string) => github.deliveries().some((d) => d.id === id && d.redelivery && d.status === 200);
    await waitFor("every lost delivery to be delivered again and answered", () => [...lostIds].every(answered), 45_000);
    // Only lost ones were asked for: what reached the first Lisa is not delivered twice.
    const askedFor = () => {
      const attempts = new Map(github.deliveries().map((d) => [d.attempt, d.id]));
      return github
        .requests()
        .filter((r) => r.method === "POST" && /^\/app\/hook\/deliveries\/\d+\/attempts$/.test(r.path))
        .map((r) => attempts.get(Number(r.path.split("/")[4])));
    };
    expect(askedFor().length).toBeGreaterThanOrEqual(lostIds.size);
    for (const id of askedFor()) expect(lostIds.has(id ?? "")).toBe(true);

    // A third Lisa on the same data asks again for none that was answered (each ask is recorded):
    // only for a webhook the second Lisa's kill itself cut off (its own last writes' events), if any.
    const before = askedFor().length;
    const reads = () => github.requests().filter((r) => r.method === "GET" && r.path.startsWith("/app/hook/deliveries")).length;
    const readsBefore = reads();
    lisa.killAll();
    const answeredBefore = new Set(
      github
        .deliveries()
        .filter((d) => d.status !== null && d.status >= 200 && d.status < 300)
        .map((d) => d.id),
    );
    await lisa.start({ dataDir, claudeBinary: agent.binary });
    await waitFor("the third Lisa to have read the delivery log", () => reads() > readsBefore, 10_000);
    const askedAgain = askedFor().slice(before);
    expect(askedAgain.filter((id) => answeredBefore.has(id ?? "") || lostIds.has(id ?? ""))).toEqual([]);
  });
});
