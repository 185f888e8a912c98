import { chmod, lstat, unlink } from "node:fs/promises";
import { connect, type Server } from "node:net";

/** Thrown when another process serves the socket, or the path is not ours to take. */
export class SocketInUseError extends Error {
  override readonly name = "SocketInUseError";
}

/** Unix socket paths are limited by sockaddr_un (108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH_BYTES = 103;

/**
 * Makes `path` free for a new listener: a stale socket file (nobody accepts on it) is removed; a
 * live one is refused, so the process already serving keeps its socket.
 */
export async function claimSocketPath(path: string): Promise<void> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new SocketInUseError(`socket path is too long (${Buffer.byteLength(path)} bytes, at most ${MAX_SOCKET_PATH_BYTES}): ${path}`);
  }
  const stat = await lstat(path).catch(() => null);
  if (stat === null) return;
  if (!stat.isSocket()) throw new SocketInUseError(`${path} exists and is not a socket; not replacing it`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    // ECONNREFUSED: a socket file left by a process that is gone. ENOENT: it just went away.
    probe.once("error", () => resolve(false));
  });
  if (live) throw new SocketInUseError(`another pod is already serving ${path}`);
  await unlink(path).catch(() => undefined);
}

/** Listens with the socket file created 0600 (umask around the synchronous bind, chmod after). */
export async function listenOnSocket(server: Server, path: string): Promise<{ ino: number }> {
  await new Promise<void>((resolve, reject) => {
    const previous = process.umask(0o177);
    try {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
  await chmod(path, 0o600);
  return { ino: (await lstat(path)).ino };
}

/** Removes the socket file only if it is still the one we created (a successor may own the path). */
export async function removeSocketFile(path: string, ino: number): Promise<void> {
  const stat = await lstat(path).catch(() => null);
  if (stat?.ino === ino) await unlink(path).catch(() => undefined);
}
