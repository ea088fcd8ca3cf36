/** Plain view objects the renderers take: reporting never reads the store itself. */

export type PrGate = {
  repo: string;
  number: number;
  url: string;
  status: "approved" | "pending" | "changes_requested" | "merged" | "dropped";
  approvers: string[];
  blockers: string[];
  headSha: string | null;
};

export type GuidanceView = {
  n: number;
  author: string;
  source: "command" | "review" | "inline" | "continue" | "fix";
  where?: string;
  url?: string;
  body: string;
  outdated: boolean;
  status?: "addressed" | "partly" | "not_addressed" | "not_applicable";
  note?: string;
  replied?: boolean;
};

export type GateLine = { command: string; passed: boolean; regressed?: boolean };
export type CommitView = { sha: string; subject: string; author: string; human: boolean };
export type FileChange = { path: string; added: number; deleted: number };
