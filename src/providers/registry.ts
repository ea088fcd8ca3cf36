import { claudeProvider } from "./claude.ts";
import { geminiProvider } from "./gemini.ts";
import { opencodeProvider } from "./opencode.ts";
import type { Provider } from "./provider.ts";

/**
 * Every agent CLI Lisa can drive, by the name used in `.github/lisa.yml`. The configuration schema
 * is built from this list, so a new CLI is its module and one line here.
 */
export const providers = {
  /** Claude Code (`@anthropic-ai/claude-code`); `model` as `sonnet` or a full model id. */
  claude: claudeProvider,
  /** Gemini CLI (`@google/gemini-cli`); `model` as `gemini-2.5-flash`. */
  gemini: geminiProvider,
  /** OpenCode (`opencode-ai`); `model` as `provider/model`, e.g. `anthropic/claude-sonnet-4-5`. */
  opencode: opencodeProvider,
} satisfies Record<string, Provider>;

export type ProviderName = keyof typeof providers;
