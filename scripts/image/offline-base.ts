import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Podman } from "./podman.ts";

/** Where Debian takes the certificate authorities a machine adds (update-ca-certificates). */
const LOCAL_CAS = "/usr/local/share/ca-certificates";

/** The local image the Dockerfile's BASE_IMAGE names for an offline build. */
export const OFFLINE_BASE = "localhost/lisa-offline-base:bookworm-node22";

/**
 * Makes, with no image registry, what the Dockerfile's default base (the official Node.js LTS image
 * on Debian bookworm) gives it: Debian bookworm from Debian's own packages (`mmdebstrap`), Node.js
 * 22 from the npm registry's `node` package, npm at `npmVersion`, and the unprivileged user `node`
 * (uid 1000); then imports it into `podman`. `work` is a folder the caller removes.
 */
export async function makeOfflineBase(podman: Podman, work: string, npmVersion: string): Promise<void> {
  const node = path.join(work, "node");
  const npm = path.join(work, "npm");
  mkdirSync(node, { recursive: true });
  mkdirSync(npm, { recursive: true });
  // The `node` package's own install script picks the binary for this platform; npm itself goes in
  // as the image's global npm.
  writeFileSync(path.join(node, "package.json"), JSON.stringify({ private: true, allowScripts: { node: true } }));
  shell("npm", ["install", "--prefix", node, "--no-audit", "--no-fund", "node@22"]);
  shell("npm", ["install", "--global", "--prefix", npm, "--no-audit", "--no-fund", `npm@${npmVersion}`]);
  const binary = path.join(work, "node-binary");
  copyFileSync(path.join(node, "node_modules", "node", "bin", "node"), binary);
  const tarball = path.join(work, "base.tar");
  shell("mmdebstrap", [
    "--quiet",
    "--variant=minbase",
    "--include=ca-certificates",
    // What the official image has: node and npm under /usr/local, and the user `node`.
    `--customize-hook=install -m 755 ${binary} "$1/usr/local/bin/node"`,
    `--customize-hook=cp -a ${npm}/lib "$1/usr/local/" && cp -a ${npm}/bin/. "$1/usr/local/bin/"`,
    '--customize-hook=chroot "$1" useradd --create-home --uid 1000 --user-group --shell /bin/bash node',
    // The certificate authorities this machine adds to Debian's (a TLS-inspecting proxy's, in CI),
    // so that the build's npm reaches the registry as this machine's does.
    `--customize-hook=cp -a ${LOCAL_CAS}/. "$1${LOCAL_CAS}/" && chroot "$1" update-ca-certificates >/dev/null`,
    // apt's lists go: the Dockerfile fetches its own, as it does on the official image.
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin',
    "bookworm",
    tarball,
  ]);
  await podman.ok([
    "import",
    "--change",
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    // Node.js (npm in the build) trusts the system's authorities too, the added ones among them.
    "--change",
    "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt",
    "--change",
    'CMD ["node"]',
    tarball,
    OFFLINE_BASE,
  ]);
}

function shell(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (result.status !== 0) {
    const said = `${result.stderr ?? ""}${result.stdout ?? ""}`.trim().slice(-2_000) || result.error?.message;
    throw new Error(`${command} ${args[0]} failed (${result.status}): ${said}`);
  }
}
