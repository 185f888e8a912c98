// Where a pod listens, per platform. POSIX: a Unix socket file (default <data_dir>/pod.sock),
// mode 0600: the file is the protection and the protocol is exactly seed 004's. Windows: a named
// pipe derived from the data dir (no file to claim, chmod or unlink; a pipe's default ACL lets
// other local users connect), so a client first sends the token from <data_dir>/pod.token.
import { createHash } from "node:crypto";
import path from "node:path";

export interface PodEndpoint {
  /** The socket file path, or the pipe name (`\\.\pipe\...`). */
  path: string;
  /** A named pipe (Windows): no file to claim, chmod or remove. */
  pipe: boolean;
  /** The file holding the token a client must send first; null where no handshake is needed (POSIX). */
  tokenFile: string | null;
}

export const POD_TOKEN_FILE = "pod.token";

/**
 * `\\.\pipe\local-ai-pod-<16 hex>`: the first 16 hex digits of the SHA-256 of the absolute data
 * dir, lower-cased (Windows paths have no case). One data dir, one default pipe, whatever the
 * spelling of its path; two data dirs never share one.
 */
export function podPipeName(dataDir: string): string {
  const key = path.win32.resolve(dataDir).toLowerCase();
  return `\\\\.\\pipe\\local-ai-pod-${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
}

/**
 * The endpoint of `serve-socket` and `local-ai pod`: `--socket` (relative to `cwd`) or the
 * default. On Windows `--socket` names a pipe: `\\.\pipe\name` as is, a bare name under `\\.\pipe\`.
 */
export function podEndpoint(options: {
  dataDir: string;
  socket?: string | undefined;
  cwd: string;
  os: NodeJS.Platform;
  /** Tests only (LOCAL_AI_POD_TOKEN_HANDSHAKE=1): the Windows handshake on a POSIX socket file. */
  handshakeOnPosix?: boolean;
}): PodEndpoint {
  const { dataDir, socket, cwd, os } = options;
  if (os !== "win32") {
    const tokenFile = options.handshakeOnPosix === true ? path.join(dataDir, POD_TOKEN_FILE) : null;
    return { path: path.resolve(cwd, socket ?? path.join(dataDir, "pod.sock")), pipe: false, tokenFile };
  }
  const tokenFile = path.win32.join(dataDir, POD_TOKEN_FILE);
  if (socket === undefined) return { path: podPipeName(dataDir), pipe: true, tokenFile };
  return { path: socket.startsWith("\\\\.\\pipe\\") ? socket : `\\\\.\\pipe\\${socket}`, pipe: true, tokenFile };
}

/** The env switch of the test seam above. */
export function handshakeOnPosix(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.LOCAL_AI_POD_TOKEN_HANDSHAKE === "1";
}
