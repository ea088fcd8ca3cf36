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
  const run = (args: string[], command: string[]) =>
    podman.run([
      "run",
      "--rm",
      "--no-healthcheck",
      "--network",
      "none",
      ...podmanSecurityOptions(DOCKER_SECURITY_OPTIONS),
      ...args,
      options.image,
      ...command,
    ]);
  const seen: string[] = [];

  const user = await run([], ["id", "-un"]);
  if (user.code !== 0 || user.stdout.trim() === "root") throw new Error(`the image runs as ${user.stdout.trim() || user.stderr}`);
  const help = await run([], ["lisa", "--help"]);
  if (help.code !== 0 || !help.stdout.startsWith("usage: lisa"))
    throw new Error(`lisa --help in the image: ${help.stdout}${help.stderr}`);
  seen.push(`runs as ${user.stdout.trim()}; lisa --help prints the usage`);

  // An App's credentials of the right shape, so the doctor has only the image itself to judge.
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const app = ["--env", "APP_ID=1", "--env", `PRIVATE_KEY=${privateKey.export({ type: "pkcs1", format: "pem" })}`];
  const doctor = await run([...app, "--env", "WEBHOOK_SECRET=a-webhook-secret-of-the-check"], ["lisa", "doctor"]);
  options.log(doctor.stdout);
  const failing = DOCTOR_MUST_PASS.filter((check) => !new RegExp(`^ok\\s+${check}\\s`, "m").test(doctor.stdout));
  if (failing.length > 0)
    throw new Error(`lisa doctor in the image does not pass ${failing.join(", ")}:\n${doctor.stdout}${doctor.stderr}`);
  seen.push(
    `lisa doctor: ${DOCTOR_MUST_PASS.join(", ")} ok (${/\d+ failed, \d+ warning\(s\), \d+ ok/.exec(doctor.stdout)?.[0]})`,
  );

  // The demo is not in the image (scripts/, dev/ and emulator/ are development tools): mounted, it
  // runs the image's Lisa, agent CLIs and sandbox.
  const mounts = ["scripts", "dev", "emulator"].flatMap((dir) => [
    "--volume",
    `${path.join(options.checkout, dir)}:/app/${dir}:ro`,
  ]);
  const started = Date.now();
  const demo = await run(mounts, ["node", "--disable-warning=ExperimentalWarning", "scripts/demo.ts"]);
  options.log(demo.stdout);
  if (demo.code !== 0) throw new Error(`the demo failed in the image (${demo.code}):\n${demo.stderr.slice(-3_000)}`);
  seen.push(`npm run demo's script in the image: passed in ${((Date.now() - started) / 1000).toFixed(0)} s, offline`);
  return seen;
}
