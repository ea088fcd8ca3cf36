#!/usr/bin/env node
// A stand-in for the Claude Code CLI, for trying `npm start` against `lisa emulator` with no model
// key: `lisa emulator` names it in LISA_CLAUDE_PATH. Each session reads Lisa's prompt on standard
// input, adds a line to STAND-IN.md in its worktree, describes that change in Lisa's manifest and
// answers like `claude -p --output-format stream-json`. It changes nothing else and calls no model.
import fs from "node:fs";
import readline from "node:readline";

if (process.argv.includes("--version")) {
  // Older than Claude Code's own --worktree (2.1.50): Lisa makes the worktree itself.
  process.stdout.write("1.0.0 (Claude Code stand-in)\n");
  process.exit(0);
}
/** With `--input-format stream-json` (how Lisa runs Claude Code) the prompt is the first user message, one JSON line. */
async function firstMessage() {
  for await (const line of readline.createInterface({ input: process.stdin })) return JSON.parse(line).message.content;
  return "";
}

const prompt = process.argv.includes("--input-format") ? await firstMessage() : fs.readFileSync(0, "utf8");
const file = "STAND-IN.md";
const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "# Changes by the stand-in agent\n\n";
const session = before.split("\n").filter((line) => line.startsWith("- ")).length + 1;
fs.writeFileSync(file, `${before}- Session ${session}: a prompt of ${prompt.length} characters read; no model asked.\n`);
fs.writeFileSync(
  ".lisa-manifest.json",
  JSON.stringify({
    title: "Record a stand-in session",
    what: `Adds session ${session} to STAND-IN.md: the emulator's stand-in agent, which calls no model, did this pass.`,
    testing: "Nothing to test: the stand-in changes one Markdown file.",
    pass_summary: `Session ${session} of the stand-in agent.`,
  }),
);
const result = {
  type: "result",
  subtype: "success",
  is_error: false,
  result: `Stand-in session ${session} wrote STAND-IN.md.`,
  total_cost_usd: 0,
  num_turns: 1,
  session_id: `stand-in-${session}`,
  usage: { input_tokens: 0, output_tokens: 0 },
};
process.stdout.write(`${JSON.stringify(result)}\n`);
// Lisa keeps standard input open for guidance until the session has answered: the stand-in takes none.
process.exit(0);
