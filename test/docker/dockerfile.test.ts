import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The image installs the agent CLIs globally, outside package-lock.json: its pins must follow the
// versions the suite drives, or the image runs CLIs no test has seen.

const read = (file: string) => readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), "utf8");

describe("the Dockerfile", () => {
  it("pins each agent CLI at the version package-lock.json installs for the tests", () => {
    const dockerfile = read("Dockerfile");
    const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, { version: string }> };
    const pins = {
      CLAUDE_CODE_VERSION: "@anthropic-ai/claude-code",
      GEMINI_CLI_VERSION: "@google/gemini-cli",
      OPENCODE_VERSION: "opencode-ai",
    };
    for (const [arg, name] of Object.entries(pins)) {
      const pinned = new RegExp(`^ARG ${arg}=(\\S+)$`, "m").exec(dockerfile)?.[1];
      expect(pinned, arg).toBe(lock.packages[`node_modules/${name}`]?.version);
      expect(dockerfile).toContain(`"${name}@\${${arg}}"`);
    }
  });
});
