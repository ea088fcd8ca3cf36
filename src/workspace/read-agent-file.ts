import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** Why a file the agent wrote cannot be read; the message names the file and the reason, never its content. */
export class AgentFileError extends Error {
  override name = "AgentFileError";
}

/**
 * Reads a file an agent wrote (its plan, its manifest) as text, or undefined when there is none.
 * The agent chooses what is at that path: a symbolic link to `/etc/passwd` or to another
 * repository's files, a FIFO that blocks any reader forever, a file of gigabytes. So it is opened
 * without following links and without blocking, must be a regular file, and is read up to `limit`
 * bytes.
 * @throws AgentFileError for a link, anything but a regular file, or a file over `limit`
 */
export async function readAgentFile(file: string, limit: number): Promise<string | undefined> {
  const name = file.split("/").at(-1) ?? file;
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw new AgentFileError(`${name} is a symbolic link; Lisa reads only a regular file there.`);
    throw new AgentFileError(`${name} cannot be read (${code ?? "unknown error"}).`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile())
      throw new AgentFileError(`${name} is not a regular file (${kindOf(stat)}); Lisa reads only a regular file there.`);
    if (stat.size > limit) throw new AgentFileError(`${name} is larger than ${formatBytes(limit)} (${formatBytes(stat.size)}).`);
    // The size may grow between stat and read: read at most one byte past the limit to tell.
    const buffer = Buffer.alloc(limit + 1);
    const { bytesRead } = await handle.read(buffer, 0, limit + 1, 0);
    if (bytesRead > limit) throw new AgentFileError(`${name} is larger than ${formatBytes(limit)}.`);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}

function kindOf(stat: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  return "a device";
}

const formatBytes = (bytes: number) => (bytes >= 1024 ? `${Math.round(bytes / 1024)} KiB` : `${bytes} bytes`);
