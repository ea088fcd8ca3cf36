import { generateKeyPairSync } from "node:crypto";
import path from "node:path";
import type { Podman } from "./podman.ts";
import { DOCKER_SECURITY_OPTIONS, podmanSecurityOptions } from "./run-options.ts";

/** What `lisa doctor` must say `ok` to in the image, run as docs/deployment.md runs it. */
const DOCTOR_MUST_PASS = [
  "Node.js",
  "git",
  "environment",
  "sandbox",
  "data directory",
  "claude as this user",
  "claude CLI",
  "gemini CLI",
  "opencode CLI",
];

/**
 * The image run as deployed: its own user, the security options docs/deployment.md gives, and no
 * network at all (nothing is fetched at run time). Returns what it saw, a line each.
 */
export async function checkInImage(
  podman: Podman,
  options: { image: string; checkout: string; log: (line: string) => void },
): Promise<string[]> {
  // One container for all of it (on vfs each container is a whole copy of the image), with the
  // demo's own files mounted: scripts/, dev/ and emulator/ are development tools, not in the image.
  const mounts = ["scripts", "dev", "emulator"].flatMap((dir) => [
    "--volume",
    `${path.join(options.checkout, dir)}:/app/${dir}:ro`,
  ]);
  const container = "lisa-in-image";
  await podman.ok([
    ...["run", "--detach", "--no-healthcheck", "--name", container, "--network", "none"],
    ...podmanSecurityOptions(DOCKER_SECURITY_OPTIONS),
    ...mounts,
    options.image,
    ...["sleep", "infinity"],
  ]);
  const exec = (command: string[], env: string[] = []) =>
    podman.run(["exec", ...env.flatMap((variable) => ["--env", variable]), container, ...command]);
  const seen: string[] = [];
  try {
    const user = await exec(["id", "-un"]);
    if (user.code !== 0 || user.stdout.trim() === "root")
      throw new Error(`the image runs as ${user.stdout.trim() || user.stderr}`);
    const help = await exec(["lisa", "--help"]);
    if (help.code !== 0 || !help.stdout.startsWith("usage: lisa"))
      throw new Error(`lisa --help in the image: ${help.stdout}${help.stderr}`);
    seen.push(`runs as ${user.stdout.trim()}; lisa --help prints the usage`);

    // An App's credentials of the right shape, so the doctor has only the image itself to judge.
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const app = [
      "APP_ID=1",
      `PRIVATE_KEY=${privateKey.export({ type: "pkcs1", format: "pem" })}`,
      "WEBHOOK_SECRET=a-webhook-secret-of-the-image-check",
    ];
    const doctor = await exec(["lisa", "doctor"], app);
    options.log(doctor.stdout.trimEnd());
    const failing = DOCTOR_MUST_PASS.filter((check) => !new RegExp(`^ok\\s+${check}\\s`, "m").test(doctor.stdout));
    if (failing.length > 0)
      throw new Error(`lisa doctor in the image does not pass ${failing.join(", ")}:\n${doctor.stdout}${doctor.stderr}`);
    seen.push(
      `lisa doctor: ${DOCTOR_MUST_PASS.join(", ")} ok (${/\d+ failed, \d+ warning\(s\), \d+ ok/.exec(doctor.stdout)?.[0]})`,
    );

    const started = Date.now();
    const demo = await exec(["node", "--disable-warning=ExperimentalWarning", "scripts/demo.ts"]);
    if (demo.code !== 0) throw new Error(`the demo failed in the image (${demo.code}):\n${demo.stderr.slice(-3_000)}`);
    seen.push(`npm run demo's script in the image: passed in ${((Date.now() - started) / 1000).toFixed(0)} s, offline`);
  } finally {
    await podman.run(["rm", "--force", "--time", "0", container]);
  }
  return seen;
}
