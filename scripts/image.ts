// `npm run image` (a step of .ci/run): the Docker image built and run for real, where no Docker
// daemon runs and no image registry is reachable, with podman:
//   1. an offline base like the official Node.js image: Debian bookworm from Debian's packages
//      (mmdebstrap), Node.js 22 from the npm registry's `node` package, npm, a user `node`;
//   2. the Dockerfile built on it (BASE_IMAGE), timed, and the image's size;
//   3. the image run as its own user with the options docs/deployment.md gives, and no network:
//      `lisa --help`, `lisa doctor` (the sandbox must work inside), the demo;
//   4. docker/compose.yml brought up (web, two workers, PostgreSQL) and one issue taken through it
//      from the emulator to an accepted run.
// Podman's state lives in a temporary folder of its own, removed at the end (vfs layers are big).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { composeIssue } from "./image/compose-issue.ts";
import { checkInImage } from "./image/in-image.ts";
import { makeOfflineBase, OFFLINE_BASE } from "./image/offline-base.ts";
import { podmanIn } from "./image/podman.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));
const IMAGE = "localhost/lisa:check";
const POSTGRES_IMAGE = "localhost/lisa-offline-postgres:check";
const started = Date.now();
const elapsed = (since: number) => `${((Date.now() - since) / 1000).toFixed(0)} s`;
const say = (line: string) => process.stdout.write(`[image +${elapsed(started)}] ${line}\n`);

const missing = ["podman", "mmdebstrap"].filter((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0);
if (missing.length > 0) {
  process.stderr.write(`npm run image needs ${missing.join(" and ")}: apt-get install podman runc mmdebstrap\n`);
  process.exit(1);
}
// The image's sandbox, and podman itself when not root, need user namespaces.
const userns = spawnSync("unshare", ["--user", "--map-root-user", "true"], { encoding: "utf8" });
if (userns.status !== 0) {
  process.stderr.write(
    `npm run image: podman cannot run the image here: this machine refuses user namespaces (unshare --user: ${(userns.stderr || userns.error?.message || "").trim()}).\n`,
  );
  process.exit(1);
}

const work = mkdtempSync(path.join(tmpdir(), "lisa-image-"));
const podman = podmanIn(path.join(work, "podman"));
const figures: string[] = [];
let failed = false;
try {
  const info = await podman.run(["info", "--format", "{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}"]);
  if (info.code !== 0) throw new Error(`podman cannot run here:\n${info.stderr.trim()}`);
  const npmVersion = /^ARG NPM_VERSION=(\S+)$/m.exec(readFileSync(path.join(CHECKOUT, "Dockerfile"), "utf8"))?.[1] ?? "11";

  let since = Date.now();
  say("1. making the offline base (Debian bookworm with mmdebstrap, Node.js 22 from the npm registry)…");
  await makeOfflineBase(podman, path.join(work, "base"), npmVersion);
  figures.push(`offline base: ${elapsed(since)}`);

  since = Date.now();
  say(`2. building the Dockerfile on ${OFFLINE_BASE} with podman (${info.stdout.trim()})…`);
  const build = (tag: string, context: string) =>
    podman.run([
      ...["build", "--isolation", "chroot", "--format", "docker", "--pull=never", "--layers=false"],
      ...["--build-arg", `BASE_IMAGE=${OFFLINE_BASE}`, "--tag", tag, context],
    ]);
  // The compose set's PostgreSQL is built meanwhile: both builds mostly wait on the network.
  const postgresBuilt = build(POSTGRES_IMAGE, path.join(CHECKOUT, "docker", "offline-postgres"));
  const built = await build(IMAGE, CHECKOUT);
  if (built.code !== 0) {
    process.stdout.write(`${`${built.stdout}${built.stderr}`.split("\n").slice(-60).join("\n")}\n`);
    throw new Error(`the Dockerfile does not build (podman build exited ${built.code}; its last lines above)`);
  }
  const buildTime = elapsed(since);
  const size = Number((await podman.ok(["image", "inspect", "--format", "{{.Size}}", IMAGE])).trim());
  figures.push(`image build: ${buildTime}`, `image size: ${(size / 1e6).toFixed(0)} MB`);
  say(`built ${IMAGE} in ${buildTime}: ${(size / 1e6).toFixed(0)} MB`);

  since = Date.now();
  say("3. running the image as its own user, with no network: lisa --help, lisa doctor, the demo…");
  for (const line of await checkInImage(podman, {
    image: IMAGE,
    checkout: CHECKOUT,
    log: (text) => say(`lisa doctor in the image:\n${text.replace(/^/gm, "    ")}`),
  }))
    say(`   ${line}`);
  figures.push(`runs in the image: ${elapsed(since)}`);

  since = Date.now();
  say("4. bringing docker/compose.yml up (a PostgreSQL from Debian's packages standing in for postgres:17)…");
  const postgres = await postgresBuilt;
  if (postgres.code !== 0) throw new Error(`the stand-in PostgreSQL does not build:\n${postgres.stderr.slice(-2_000)}`);
  const seen = await composeIssue(podman, {
    checkout: CHECKOUT,
    image: IMAGE,
    postgresImage: POSTGRES_IMAGE,
    work: path.join(work, "compose"),
    log: say,
  });
  for (const line of seen) say(`   ${line}`);
  figures.push(`compose set and one issue: ${elapsed(since)}`);
} catch (error) {
  failed = true;
  process.stderr.write(`npm run image failed: ${(error as Error).message}\n`);
} finally {
  await podman.remove();
  rmSync(work, { recursive: true, force: true });
}
say(`${failed ? "FAILED" : "passed"}; ${[...figures, `whole step: ${elapsed(started)}`].join("; ")}`);
process.exit(failed ? 1 : 0);
