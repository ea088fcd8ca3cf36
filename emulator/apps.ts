import type { EmulatorContext } from "./context.ts";
import { accountJson } from "./representations.ts";

/** The App id GitHub Actions reports its check runs with on github.com. */
export const ACTIONS_APP_ID = 15368;

/** What GitHub shows of the App `appId` (a check run's or suite's `app`): Lisa's, Actions', or one of `checksApps`. */
export function appJson(context: EmulatorContext, appId: number) {
  const links = context.links();
  const slug =
    appId === context.appId
      ? "lisa"
      : appId === ACTIONS_APP_ID
        ? "github-actions"
        : (context.checksApps.find((app) => app.id === appId)?.slug ?? `app-${appId}`);
  const owner = appId === context.appId ? context.bot : context.state.account("github", "Organization");
  return {
    id: appId,
    slug,
    node_id: Buffer.from(`App:${appId}`).toString("base64").replace(/=+$/, ""),
    owner: accountJson(owner, links),
    name: slug,
    description: null,
    external_url: `${links.base}/apps/${slug}`,
    html_url: `${links.base}/apps/${slug}`,
    created_at: "2024-01-01T00:00:00Z",
    updated_at: "2024-01-01T00:00:00Z",
    permissions: appId === context.appId ? context.permissions : { checks: "write" },
    events: appId === context.appId ? [...context.events] : [],
  };
}
