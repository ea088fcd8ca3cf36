// The relay of tcp-proxy.ts, in a thread of its own: the store under test blocks its thread while
// it waits for PostgreSQL, and the relay must go on meanwhile. Answers each command with its port.
import { createServer, type Server, Socket } from "node:net";
import { parentPort, workerData } from "node:worker_threads";

const target = workerData as { host: string; port: number };
const sockets = new Set<Socket>();
let server: Server | undefined;
let port = 0;

async function listen(): Promise<void> {
  const listening = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    listening.once("error", reject);
    listening.listen(port, "127.0.0.1", () => resolve());
  });
  port = (listening.address() as { port: number }).port;
  server = listening;
}

async function cut(): Promise<void> {
  const closing = server;
  server = undefined;
  for (const socket of sockets) socket.destroy();
  if (closing) await new Promise((resolve) => closing.close(resolve));
}

parentPort?.on("message", async (command: "listen" | "cut") => {
  await (command === "listen" ? listen() : cut());
  parentPort?.postMessage(port);
});
