// Runs Lisa in a process of its own so a test can kill it mid-run, as a crash or a deploy would.
// GitHub is faked with nock inside this process; the fake's state is written to a file for the test.
// Usage: node lisa-process.ts '<json options>'
import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import nock from "nock";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.ts";
import { fakeGitHub, type Route } from "./fake-github.ts";
import { createHarness, deliverLabeled, OWNER, REPO, TOKEN } from "./lisa-harness.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as {
  remoteRoot: string;
  dataDir: string;
  claudeBinary: string;
  config: string;
  stateFile: string;
  routes: Route[];
  sandbox?: SandboxSettings;
};

nock.disableNetConnect();
const github = fakeGitHub({
  owner: OWNER,
  repo: REPO,
  installationId: 2,
  token: TOKEN,
  gitDir: path.join(options.remoteRoot, `${OWNER}/${REPO}.git`),
  config: options.config,
  routes: options.routes,
});
setInterval(() => {
  // Write then rename, so the test never reads a half-written file.
  writeFileSync(`${options.stateFile}.tmp`, JSON.stringify({ ...github.state, labels: [...github.state.labels] }));
  renameSync(`${options.stateFile}.tmp`, options.stateFile);
}, 50);
const harness = createHarness({
  remoteRoot: options.remoteRoot,
  claudeBinary: options.claudeBinary,
  dataDir: options.dataDir,
  ...(options.sandbox ? { sandbox: options.sandbox } : {}),
});
await harness.lisa.start();
await deliverLabeled(harness);
