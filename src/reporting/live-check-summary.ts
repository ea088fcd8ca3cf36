import type { CheckReport } from "../github/github-port.ts";
import { describeGates } from "./describe-gate.ts";
import { money, plural, shortSha } from "./format.ts";
import { PURPOSE } from "./tracking-steps.ts";
import { cleanLine, code, fenced } from "./untrusted.ts";
import type { GateLine } from "./views.ts";

/** At most this many files and commands are listed, the newest; each is cut to `MAX_ITEM` characters. */
export const MAX_FILES = 20;
export const MAX_COMMANDS = 10;
const MAX_ITEM = 160;

/** A running pass's session as the live "Lisa" check run shows it; every string but Lisa's own is the agent's. */
export interface LiveView {
  issueRef: string;
  pass: number;
  headSha: string;
  /** The step's agent sessions in this pass so far (a gate failure starts another). */
  session: number;
  /** What the current session is for: `revise`, `fix_gates`, … */
  purpose: string | undefined;
  provider: string | undefined;
  turns: number;
  costUsd: number;
  /** Every file touched in the pass, oldest first, and how many were dropped from the front. */
  files: string[];
  commands: string[];
  commandsRun: number;
  /** What the agent said last. */
  said: string | undefined;
  /** The gates' results once they have run in this pass. */
  gates: GateLine[] | undefined;
  intervalMs: number;
  trackingUrl: string | undefined;
  secrets: readonly string[];
}

/** How a live session's check run ends. */
export type LiveOutcome =
  | { kind: "built" }
  | { kind: "blocked"; reason: string }
  | { kind: "stopped" }
  | { kind: "failed"; reason: string };

function body(view: LiveView): string {
  const { secrets } = view;
  const facts = [
    `**Session** ${view.session}${view.purpose ? `, ${PURPOSE[view.purpose] ?? "working"}` : ""}`,
    `**Provider** ${view.provider ? code(view.provider, { secrets, max: 40 }) : "—"}`,
    `**Turns** ${view.turns}`,
    `**Cost so far** ${view.costUsd > 0 ? money(view.costUsd) : "not reported yet"}`,
  ].join(" · ");
  const shownFiles = view.files.slice(-MAX_FILES);
  const files = shownFiles.length
    ? `**Files touched** (${view.files.length}): ${shownFiles.map((f) => code(f, { secrets, max: MAX_ITEM })).join(", ")}${view.files.length > shownFiles.length ? `, and ${view.files.length - shownFiles.length} more` : ""}`
    : "**Files touched**: none yet";
  const shownCommands = view.commands.slice(-MAX_COMMANDS);
  const commands = shownCommands.length
    ? [
        `**Commands run** (${view.commandsRun}${view.commandsRun > shownCommands.length ? `, the last ${shownCommands.length}` : ""}; names only, never their output):`,
        ...shownCommands.map((c) => `- ${code(c, { secrets, max: MAX_ITEM })}`),
      ].join("\n")
    : "**Commands run**: none yet";
  const said = view.said?.trim()
    ? `**The agent's latest words** (its own text, quoted as data):\n\n${fenced(view.said, { secrets, maxLines: 12, maxLineLength: 200 })}`
    : "";
  const gates = view.gates
    ? view.gates.length
      ? `**Gates**: ${describeGates(view.gates, view.pass, secrets)}`
      : "**Gates**: none are configured."
    : "**Gates**: not run yet in this pass.";
  const tracking = view.trackingUrl ? `The run's whole story: [tracking comment](${view.trackingUrl}).` : "";
  return [facts, files, commands, said, gates, tracking].filter(Boolean).join("\n\n");
}

/** The session as it runs: in progress, refreshed at most every `intervalMs`. */
export function liveReport(view: LiveView): CheckReport {
  const phase = view.gates ? "gates ran" : `${view.provider ?? "the agent"} is working, turn ${view.turns}`;
  return {
    title: cleanLine(`Pass ${view.pass}: ${phase}`, { secrets: view.secrets, max: 120 }),
    summary: `Pass ${view.pass} of ${view.issueRef} is running on ${shortSha(view.headSha)}. This check follows the agent's session live and is updated at most every ${plural(Math.max(1, Math.round(view.intervalMs / 1000)), "second")}.\n\n${body(view)}`,
    ...(view.trackingUrl ? { detailsUrl: view.trackingUrl } : {}),
  };
}

/** The session is over: the check run says how, with what it saw. */
export function liveEndReport(view: LiveView, outcome: LiveOutcome): CheckReport {
  const reason = "reason" in outcome ? cleanLine(outcome.reason, { secrets: view.secrets, max: 1000 }) : "";
  const [conclusion, title, words] =
    outcome.kind === "built"
      ? ([
          "neutral",
          `Pass ${view.pass}'s session is done`,
          'The gates passed; Lisa pushes the work as a new head, whose own "Lisa" check says when it is ready for review.',
        ] as const)
      : outcome.kind === "blocked"
        ? (["failure", `Pass ${view.pass} is blocked`, reason] as const)
        : outcome.kind === "stopped"
          ? (["cancelled", `Pass ${view.pass} was stopped`, "The session was stopped before it finished."] as const)
          : (["failure", `Pass ${view.pass} failed`, reason] as const);
  return {
    conclusion,
    title,
    summary: `${words}\n\nWhat pass ${view.pass} of ${view.issueRef} did on ${shortSha(view.headSha)}:\n\n${body(view)}`,
    ...(view.trackingUrl ? { detailsUrl: view.trackingUrl } : {}),
  };
}
