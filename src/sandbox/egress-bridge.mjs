// Runs inside the sandbox's own network namespace, before the command it wraps:
//   node egress-bridge.mjs <unix socket> <port> <command> [args...]
// It listens on 127.0.0.1:<port> (the namespace's own loopback) and pipes every connection to
// Lisa's egress proxy on the unix socket, the namespace's only way out. Then it runs the command
// with the same stdio, passes on the signals it gets, and exits the way the command did.
// Plain JavaScript with node: built-ins only: it runs on whatever Node Lisa runs on.
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";

const [socketPath, port, command, ...args] = process.argv.slice(2);
if (!socketPath || !port || !command) {
  process.stderr.write("usage: egress-bridge.mjs <unix socket> <port> <command> [args...]\n");
  process.exit(2);
}

const server = createServer((inside) => {
  const outside = connect(socketPath);
  inside.pipe(outside).on("error", () => inside.destroy());
  outside.pipe(inside).on("error", () => outside.destroy());
  inside.on("error", () => outside.destroy());
  outside.on("error", () => inside.destroy());
  inside.on("close", () => outside.destroy());
  outside.on("close", () => inside.destroy());
});

server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(command, args, { stdio: "inherit" });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    process.stderr.write(`${command}: ${error.message}\n`);
    process.exit(error.code === "ENOENT" ? 127 : 126);
  });
  child.on("exit", (code, signal) => {
    server.close();
    if (signal) {
      // Die by the same signal, so whoever waits on the sandbox sees how the command ended.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
});
server.on("error", (error) => {
  process.stderr.write(`Lisa's network bridge could not listen on 127.0.0.1:${port}: ${error.message}\n`);
  process.exit(125);
});
