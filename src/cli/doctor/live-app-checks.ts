import { ProbotOctokit } from "probot";
import { statusOf } from "../../github/github-error.ts";
import { readAllPages } from "../../github/read-all-pages.ts";
import { apiBaseUrl, quietLog } from "../github-api.ts";
import { appKey } from "./app-checks.ts";
import { type Grants, manifestGrants, missingGrants } from "./app-grants.ts";
import type { Check } from "./check.ts";
import { orgConfigCheck } from "./org-config-check.ts";

/**
 * `--live`: signs a JWT with the App's key and asks GitHub (or GHE_HOST) for the App and its
 * installations: wrong pairs of APP_ID and key, an App installed nowhere, and an App registered
 * before app.yml asked for a permission all show here rather than on the first issue.
 */
export async function liveAppChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const key = (await appKey(env)) ?? "";
  const baseUrl = apiBaseUrl(env);
  const octokit = new ProbotOctokit({
    auth: { appId: Number(env.APP_ID), privateKey: key },
    baseUrl,
    log: quietLog,
    retry: { enabled: false },
    throttle: { enabled: false },
    request: { timeout: 15_000 },
  });
  let app: (Grants & { slug?: string }) | null;
  let installed: (Grants & { id: number; account?: { login?: string } | null; repository_selection?: string })[];
  try {
    app = (await octokit.rest.apps.getAuthenticated()).data;
    installed = await readAllPages(octokit as never, octokit.rest.apps.listInstallations, {}, (page) => page);
  } catch (error) {
    const status = statusOf(error);
    return [
      {
        name: "App on GitHub",
        status: "FAIL",
        detail: `${baseUrl} answered ${status || (error as Error).message}`,
        fix:
          status === 401
            ? "APP_ID and the private key are not one App's: download a new key from the App's settings page."
            : "Check the network, and GHE_HOST / GHE_PROTOCOL on GitHub Enterprise Server.",
      },
    ];
  }
  const checks: Check[] = [
    installed.length > 0
      ? { name: "App on GitHub", status: "ok", detail: `${app?.slug ?? "?"}, ${installed.length} installation(s)` }
      : {
          name: "App on GitHub",
          status: "warn",
          detail: `${app?.slug ?? "?"} is installed nowhere`,
          fix: "Install it on the repositories Lisa should work in (the App's page, “Install App”).",
        },
  ];
  const wanted = await manifestGrants();
  const appMissing = missingGrants(wanted, app ?? {});
  checks.push(
    appMissing.permissions.length === 0
      ? { name: "App permissions", status: "ok", detail: "every one app.yml asks for" }
      : {
          name: "App permissions",
          status: "FAIL",
          detail: `missing ${appMissing.permissions.join(", ")}`,
          fix: "Add them in the App's settings (Permissions & events); each installation's owner must then accept them.",
        },
    appMissing.events.length === 0
      ? { name: "App events", status: "ok", detail: "subscribed to every one app.yml lists" }
      : {
          name: "App events",
          status: "FAIL",
          detail: `not subscribed to ${appMissing.events.join(", ")}: GitHub never sends them, and what they carry is never seen`,
          fix: "Tick them under “Subscribe to events” in the App's settings (Permissions & events).",
        },
  );
  for (const installation of installed) {
    const { permissions, events } = missingGrants(wanted, installation);
    const name = `installation ${installation.account?.login ?? `#${installation.id}`}`;
    const gaps = [...permissions, ...events.map((event) => `${event} events`)];
    // An installation holds only what its owner accepted; a grant the App lacks is reported above.
    const unaccepted = gaps.filter(
      (gap) => !appMissing.permissions.includes(gap) && !appMissing.events.includes(gap.replace(/ events$/, "")),
    );
    checks.push(
      unaccepted.length === 0
        ? { name, status: "ok", detail: "has accepted every permission and event" }
        : {
            name,
            status: "FAIL",
            detail: `has not accepted ${unaccepted.join(", ")}`,
            fix: "Its owner must accept the App's new permissions: Settings → GitHub Apps (Integrations) → Lisa → Review request.",
          },
    );
  }
  for (const installation of installed) {
    if (installation.repository_selection === "selected") checks.push(await orgConfigCheck(octokit, baseUrl, installation));
  }
  return checks;
}
