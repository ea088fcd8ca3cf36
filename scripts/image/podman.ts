import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/** What a podman command printed, and how it ended. */
export interface PodmanResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Podman with all its state (images, containers, networks) in one folder of its own, removed with `remove()`. */
export interface Podman {
  readonly dir: string;
  /** Runs `podman …`, and gives what it printed. */
  run(args: string[]): Promise<PodmanResult>;
  /** As `run`, and throws with podman's own words when it fails. */
  ok(args: string[]): Promise<string>;
  /** Stops every container and removes the folder (vfs keeps a whole copy of every layer). */
  remove(): Promise<void>;
}

/**
 * Podman as this machine kind runs it without a daemon or an image registry: builds on the `vfs`
 * driver (no overlay mounts needed), containers under `runc` (crun fails on hybrid cgroups), no
 * default ulimits (setting them is refused here), and networks defined in the folder, not in /etc.
 */
export function podmanIn(dir: string): Podman {
  mkdirSync(path.join(dir, "networks"), { recursive: true });
  writeFileSync(path.join(dir, "storage.conf"), `[storage]\ndriver = "vfs"\ngraphroot = "${dir}/root"\nrunroot = "${dir}/run"\n`);
  writeFileSync(
    path.join(dir, "containers.conf"),
    [
      "[containers]",
      "default_ulimits = []",
      "[engine]",
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `events_logfile_path = "${dir}/events.log"`,
      `tmp_dir = "${dir}/tmp"`,
      "[network]",
      `network_config_dir = "${dir}/networks"`,
      "",
    ].join("\n"),
  );
  const env = {
    ...process.env,
    CONTAINERS_CONF: path.join(dir, "containers.conf"),
    CONTAINERS_STORAGE_CONF: path.join(dir, "storage.conf"),
  };
  const run: Podman["run"] = (args) =>
    new Promise((resolve) => {
      const child = spawn("podman", args, { env, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk;
      });
      child.on("error", (error) => resolve({ code: 127, stdout, stderr: `${stderr}${error.message}` }));
      child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  return {
    dir,
    run,
    async ok(args) {
      const result = await run(args);
      if (result.code !== 0) {
        throw new Error(
          `podman ${args.slice(0, 2).join(" ")} failed (${result.code}): ${(result.stderr || result.stdout).trim().slice(-2_000)}`,
        );
      }
      return result.stdout;
    },
    async remove() {
      await run(["pod", "rm", "--all", "--force"]);
      await run(["rm", "--all", "--force", "--time", "0"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
