import { connect } from "node:net";

/**
 * POSTs `size` bytes to `url` over a raw socket and resolves with the answer's status. It sends the
 * head, gives the server 300 ms to answer from it (as a server refusing the body does), and only
 * then sends the body in 1 MiB chunks until an answer comes. Sending the body into a server that
 * has answered and closed would make its kernel reset the connection and drop the answer.
 */
export function rawPost(url: string, headers: Record<string, string>, size: number): Promise<number> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answered = false;
    let received = "";
    socket.on("data", (data) => {
      received += data.toString("latin1");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (status && !answered) {
        answered = true;
        resolve(Number(status[1]));
        socket.destroy();
      }
    });
    socket.on("error", (error) => (answered ? undefined : setTimeout(() => reject(error), 1_000)));
    socket.on("connect", () => {
      const head = Object.entries({ host: `${hostname}:${port}`, ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
      socket.write(`POST ${pathname} HTTP/1.1\r\n${head.join("")}\r\n`);
      const chunked = headers["transfer-encoding"] === "chunked";
      const chunk = Buffer.alloc(1024 * 1024, "a");
      let sent = 0;
      const pump = () => {
        while (sent < size && !answered && !socket.destroyed) {
          sent += chunk.length;
          const piece = chunked
            ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")])
            : chunk;
          if (!socket.write(piece)) return void socket.once("drain", pump);
        }
        if (chunked && !answered && !socket.destroyed) socket.write("0\r\n\r\n");
      };
      setTimeout(pump, 300);
    });
  });
}
