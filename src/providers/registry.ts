import type { ProviderName } from "../config/config-schema.ts";
import { claudeProvider } from "./claude.ts";
import { geminiProvider } from "./gemini.ts";
import { opencodeProvider } from "./opencode.ts";
import type { Provider } from "./provider.ts";

/** Every agent CLI Lisa can drive, by the name used in `.github/lisa.yml`. */
export const providers: Record<ProviderName, Provider> = {
  claude: claudeProvider,
  gemini: geminiProvider,
  opencode: opencodeProvider,
};
