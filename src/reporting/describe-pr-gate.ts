import { mention, repoName, shortSha } from "./format.ts";
import { link } from "./untrusted.ts";
import type { PrGate } from "./views.ts";

export interface DescribeOptions {
  /** Shorten `owner/name#5` to `name#5` for pull requests of this owner. */
  owner?: string;
  /** Say at which head an approval was given. */
  withSha?: boolean;
}

/** `acme/api#5`, or `api#5` for a pull request of `owner`; a link when its URL is safe. */
export function prRef(gate: Pick<PrGate, "repo" | "number" | "url">, owner?: string): string {
  const name = repoName(gate.repo);
  const [gateOwner, short] = gate.repo.split("/");
  const label = `${owner !== undefined && gateOwner === owner && name === gate.repo && short ? short : name}#${gate.number}`;
  return link(label, gate.url) || label;
}

/** What GitHub's rule still wants of an approved pull request: `needs 1 more approval` when its rules said how many. */
export function approvalsWanted(gate: Pick<PrGate, "approvers" | "requiredApprovals">): string {
  const missing = (gate.requiredApprovals ?? 0) - gate.approvers.length;
  return missing > 0 ? `needs ${missing} more ${missing === 1 ? "approval" : "approvals"}` : "still needs more approvals";
}

/**
 * A pull request's gate in a few words: `✅ @ann at 1a2b3c4`, `❌ changes requested by @bob`,
 * `⏳ approved by @ann; GitHub's review rule needs 1 more approval`, `⏳ waiting`.
 */
export function describeGateStatus(gate: PrGate, { withSha = false }: DescribeOptions = {}): string {
  switch (gate.status) {
    case "approved": {
      const by = gate.approvers.length ? ` ${gate.approvers.map(mention).join(", ")}` : " approved";
      return `✅${by}${withSha && gate.headSha ? ` at ${shortSha(gate.headSha)}` : ""}`;
    }
    case "changes_requested":
      return `❌ changes requested${gate.blockers.length ? ` by ${gate.blockers.map(mention).join(", ")}` : ""}`;
    case "merged":
      return "🔀 merged";
    case "dropped":
      return "🚪 closed";
    default: {
      // Approved, yet short of what GitHub's review rule asks (`review.accept: github`): say the approval counted.
      if (gate.approvers.length)
        return `⏳ approved by ${gate.approvers.map(mention).join(", ")}; GitHub's review rule ${approvalsWanted(gate)}`;
      if (gate.stale?.length) return `⏳ waiting: ${gate.stale.map(mention).join(", ")} approved an earlier head`;
      return "⏳ waiting";
    }
  }
}

/** `acme/api#5 ✅ @ann at 1a2b3c4`. */
export function describePrGate(gate: PrGate, options: DescribeOptions = {}): string {
  return `${prRef(gate, options.owner)} ${describeGateStatus(gate, options)}`;
}
