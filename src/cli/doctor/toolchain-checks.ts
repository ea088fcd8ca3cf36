import { execa } from "execa";
import type { Check } from "./check.ts";

/** Toolchains set-up and gates commonly need, and how each tells its version. */
const TOOLCHAINS: { name: string; args: string[] }[] = [
  { name: "node", args: ["--version"] },
  { name: "npm", args: ["--version"] },
  { name: "python3", args: ["--version"] },
  { name: "go", args: ["version"] },
];

/**
 * The toolchains on the PATH agents, set-up and gates get (the sandbox shows the host's programs),
 * with their versions: one missing is a warning, found here before a run fails on it.
 */
export async function toolchainChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  return Promise.all(
    TOOLCHAINS.map(async ({ name, args }): Promise<Check> => {
      const result = await execa(name, args, { reject: false, env: { PATH: env.PATH ?? "" }, extendEnv: false, timeout: 10_000 });
      const version = `${result.stdout ?? ""}`.trim().split("\n")[0] ?? "";
      return result.exitCode === 0 && version
        ? { name: `toolchain ${name}`, status: "ok", detail: version }
        : {
            name: `toolchain ${name}`,
            status: "warn",
            detail: "not found on PATH",
            fix: `Set-up commands and gates that run ${name} will fail: add it to the image (docs/setup-and-cache.md#how-set-up-runs).`,
          };
    }),
  );
}
