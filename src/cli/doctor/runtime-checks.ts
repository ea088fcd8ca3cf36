import { execa } from "execa";
import type { Check } from "./check.ts";

/** What Lisa runs on: Node.js new enough for its TypeScript, and git. */
export async function runtimeChecks(): Promise<Check[]> {
  const checks: Check[] = [];
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  checks.push(
    major > 22 || (major === 22 && minor >= 18)
      ? { name: "Node.js", status: "ok", detail: process.version }
      : { name: "Node.js", status: "FAIL", detail: process.version, fix: "Install Node.js 22.18 or newer." },
  );
  const git = await execa("git", ["--version"], { reject: false });
  checks.push(
    git.exitCode === 0
      ? { name: "git", status: "ok", detail: String(git.stdout).trim() }
      : { name: "git", status: "FAIL", detail: "not found", fix: "Install git." },
  );
  return checks;
}
