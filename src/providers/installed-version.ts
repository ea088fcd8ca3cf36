import { execa } from "execa";

const cache = new Map<string, Promise<string | undefined>>();

/** The version an agent CLI reports (`<binary> --version`), or undefined if it cannot say. Asked once per binary. */
export function installedVersion(binary: string): Promise<string | undefined> {
  let version = cache.get(binary);
  if (!version) {
    version = execa(binary, ["--version"], { reject: false, timeout: 30_000, stdin: "ignore" }).then(
      (result) => /\d+\.\d+\.\d+/.exec(String(result.stdout))?.[0],
    );
    cache.set(binary, version);
  }
  return version;
}

/** Whether dotted version `version` is at least `minimum`. */
export function isAtLeast(version: string, minimum: string): boolean {
  const a = version.split(".").map(Number);
  const b = minimum.split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) return diff > 0;
  }
  return true;
}
