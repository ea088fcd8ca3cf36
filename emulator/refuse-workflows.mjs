// git receive-pack's proc-receive hook (git 2.29+), run for pushes of an installation token whose
// permissions lack `workflows: write`: GitHub refuses such a push when a commit it adds to the
// repository creates, changes or deletes a file under `.github/workflows/`, with the message below
// as the ref's reason. Other updates fall through to receive-pack, which makes them as usual.
import { execFileSync } from "node:child_process";

const ZERO = /^0+$/;

/** Reads pkt-lines from standard input: each call gives the payloads up to the next flush-pkt. */
function pktReader() {
  let buffer = Buffer.alloc(0);
  const chunks = process.stdin[Symbol.asyncIterator]();
  async function more() {
    const { value, done } = await chunks.next();
    if (done) throw new Error("proc-receive: standard input ended mid-protocol");
    buffer = Buffer.concat([buffer, value]);
  }
  return async function untilFlush() {
    const payloads = [];
    for (;;) {
      while (buffer.length < 4) await more();
      const length = Number.parseInt(buffer.subarray(0, 4).toString("latin1"), 16);
      if (length === 0) {
        buffer = buffer.subarray(4);
        return payloads;
      }
      while (buffer.length < length) await more();
      payloads.push(buffer.subarray(4, length).toString("utf8").replace(/\n$/, ""));
      buffer = buffer.subarray(length);
    }
  };
}

const pkt = (text) => `${(Buffer.byteLength(text) + 4).toString(16).padStart(4, "0")}${text}`;
const git = (args, input) => execFileSync("git", args, { input, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });

/** The first workflow file that a commit new to the repository changes (against its first parent). */
function changedWorkflow(newSha) {
  const added = git(["rev-list", newSha, "--not", "--all"]);
  if (!added.trim()) return undefined;
  const paths = git(
    ["diff-tree", "--stdin", "-r", "--root", "--no-commit-id", "--name-only", "-m", "--first-parent", "--", ".github/workflows/"],
    added,
  );
  return paths.split("\n").find(Boolean);
}

const untilFlush = pktReader();
await untilFlush(); // version=1 and receive-pack's features: this hook asks for none of them
process.stdout.write(`${pkt("version=1\n")}0000`);
const reports = [];
for (const command of await untilFlush()) {
  const [, newSha = "", ref = ""] = command.split(" ");
  const workflow = ZERO.test(newSha) ? undefined : changedWorkflow(newSha);
  if (workflow) {
    reports.push(
      pkt(
        `ng ${ref} refusing to allow a GitHub App to create or update workflow \`${workflow}\` without \`workflows\` permission\n`,
      ),
    );
  } else reports.push(pkt(`ok ${ref}\n`), pkt("option fall-through\n"));
}
process.stdout.write(`${reports.join("")}0000`);
