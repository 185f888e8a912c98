import type { Server } from "node:net";
import { SocketInUseError } from "./pod-socket-file.js";

/**
 * Listens on a Windows named pipe. There is no file to claim or remove: a pipe exists while its
 * server does, and a second server on the same name fails with EADDRINUSE, which is the same
 * refusal a live socket file gets on POSIX.
 */
export function listenOnPipe(server: Server, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(error.code === "EADDRINUSE" || error.code === "EACCES" ? new SocketInUseError(`another pod is already serving ${name}`) : error);
    };
    server.once("error", onError);
    server.listen(name, () => {
      server.off("error", onError);
      resolve();
    });
  });
}
