import type { Socket } from "node:net";
import { handshakeMatches } from "./pod-token.js";

/** A handshake line is ~80 bytes; anything longer before a newline is not one. */
const MAX_HANDSHAKE_BYTES = 1024;
export const HANDSHAKE_TIMEOUT_MS = 5000;

/**
 * Reads a new connection's first line and checks it carries `token` (Windows pipes, see
 * pod-endpoint.ts). True: whatever followed the line is put back on the socket for the protocol.
 * False (a wrong or missing token, an over-long line, silence past `timeoutMs`, a close): the
 * caller drops the connection without a word, so a stranger learns nothing about the pod.
 */
export function awaitHandshake(socket: Socket, token: string, timeoutMs = HANDSHAKE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const finish = (ok: boolean, rest?: Buffer): void => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.off("error", onClose);
      // Paused until the protocol's reader takes over (it resumes the socket).
      socket.pause();
      if (ok && rest !== undefined && rest.length > 0) socket.unshift(rest);
      resolve(ok);
    };
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const newline = received.indexOf(0x0a);
      if (newline === -1) {
        if (received.length > MAX_HANDSHAKE_BYTES) finish(false);
        return;
      }
      const line = received.subarray(0, newline).toString("utf8");
      finish(handshakeMatches(line, token), received.subarray(newline + 1));
    };
    const onClose = (): void => finish(false);
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.once("error", onClose);
  });
}
