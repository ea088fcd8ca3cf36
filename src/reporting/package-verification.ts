import { describeGate, failedFirst } from "./describe-gate.ts";
import type { Block } from "./fit-to-limit.ts";
import { plural, shortSha } from "./format.ts";
import type { PackageView } from "./package-view.ts";
import { cleanAfter, code } from "./untrusted.ts";

const MAX_LISTED = 20;

/** The gates Lisa ran at the pass's head, the red ones first, and the anchor tests and memory file this pass edited. */
export function gateBlocks(view: PackageView): (string | Block)[] {
  const head = view.headSha ?? view.range?.to;
  const at = head ? ` at ${shortSha(head)}` : "";
  const allPassed = view.gates.every((gate) => gate.passed);
  const blocks: (string | Block)[] = [allPassed ? `**Verified by Lisa${at}**` : `**Gates run by Lisa${at}**`];
  if (view.gates.length === 0) blocks.push("- No gate commands are configured for this repository.");
  const { shown, more } = failedFirst(view.gates);
  for (const gate of shown) blocks.push({ text: `- ${describeGate(gate, view.pass, view.secrets)}`, drop: 1 });
  if (more) blocks.push(`- ${more}`);
  for (const edit of (view.anchorEdits ?? []).slice(0, MAX_LISTED)) {
    // The reason is the agent's: one clean line after Lisa's words.
    const reason = cleanAfter(" — ", edit.reason, { secrets: view.secrets, max: 300 }) || " — the agent gave no reason";
    blocks.push({ text: `- ⚠️ anchor edited: ${code(edit.path, { secrets: view.secrets })}${reason}`, drop: 1 });
  }
  if (view.memoryEdit) {
    // Agent output no one reviewed would otherwise reach every later prompt once merged.
    const file = code(view.memoryEdit, { secrets: view.secrets });
    blocks.push(`- ⚠️ memory file edited by the agent: ${file} — reviewers, check it; it reaches every later prompt`);
  }
  blocks.push("");
  return blocks;
}

/** `**Network:** 2 connections refused (hosts `a:443`, `b:80`)`: what the sandbox tried to reach and was not let. */
export function networkBlocks({ network, secrets }: PackageView): string[] {
  if (!network?.refused) return [];
  // The hosts are what the agent or a gate asked for: attacker text, each an inert code span.
  const hosts = network.hosts.slice(0, MAX_LISTED).map((host) => code(host, { secrets, max: 100 }));
  return [
    `**Network:** ${plural(network.refused, "connection")} refused by Lisa's sandbox${hosts.length ? ` (hosts ${hosts.join(", ")})` : ""}`,
    "",
  ];
}
