import { once } from "node:events";
import { Worker } from "node:worker_threads";

/**
 * A TCP relay to `target` on a fixed local port, which a test can cut (every connection dropped,
 * new ones refused, as a database server that went away) and open again on the same port. It runs
 * in a thread of its own (tcp-relay-thread.ts).
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const thread = new Worker(new URL("./tcp-relay-thread.ts", import.meta.url), { workerData: target });
  const send = async (command: "listen" | "cut"): Promise<number> => {
    const answer = once(thread, "message");
    thread.postMessage(command);
    return (await answer)[0] as number;
  };
  const port = await send("listen");
  return {
    port,
    /** Drops every connection and refuses new ones until `restore`. */
    cut: async (): Promise<void> => void (await send("cut")),
    /** Accepts connections again, on the same port. */
    restore: async (): Promise<void> => void (await send("listen")),
    async stop(): Promise<void> {
      await send("cut");
      await thread.terminate();
    },
  };
}
