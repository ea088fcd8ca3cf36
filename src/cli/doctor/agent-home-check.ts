import { credentialsInHome } from "../../security/credentials-in-files.ts";
import type { Check } from "./check.ts";

/**
 * The agents' home template (LISA_AGENT_HOME) holds no credential: everything in it is copied into
 * every agent's home, where the agent reads it. Model keys belong in Lisa's environment, where its
 * proxy sets them on the agent's requests. Names the files, never the values.
 */
export function agentHomeCheck(env: NodeJS.ProcessEnv): Check[] {
  const home = env.LISA_AGENT_HOME;
  if (!home) return [];
  const found = credentialsInHome(home);
  if (found.length === 0) return [{ name: "agent home template", status: "ok", detail: `${home}: no credentials in its files` }];
  const files = found.map(({ file, values }) => `${file} (${values.length})`).join(", ");
  return [
    {
      name: "agent home template",
      status: "FAIL",
      detail: `${home} holds credentials, copied into every agent's home: ${files}`,
      fix: "Move each into Lisa's environment (a model key in its CLI's variable, or referenced as {env:NAME} in OpenCode's config), where Lisa's proxy sets it on the agent's requests; remove what no agent needs.",
    },
  ];
}
