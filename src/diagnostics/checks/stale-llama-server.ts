import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import type { CheckResult } from "../doctor-report.js";
import { ok, warn } from "../check-result.js";

const ID = "llama_server.processes";
const TITLE = "llama-server processes";

export interface StaleServerCheckOptions {
  /** Injected in tests; /proc otherwise (Linux only: elsewhere the check is skipped). */
  procRoot?: string;
  /** Our own pid: a llama-server we started ourselves is not stale. */
  selfPid?: number;
}

interface ServerProcess {
  pid: number;
  ppid: number | null;
  port: number;
  argv: string[];
}

/**
 * llama-server processes holding a port of one of our llama-server models. The usual one is the
 * child of a local-ai that crashed or was SIGKILLed: reparented to init, still holding the port
 * and its memory. The supervisor reaps its own such child on start (pid file); this says so
 * before that, and also finds ones it cannot know (another checkout, a manual start).
 */
export async function checkStaleLlamaServers(config: Config, options: StaleServerCheckOptions = {}): Promise<CheckResult[]> {
  const ports = new Map<number, string>();
  for (const [name, model] of Object.entries(config.llama.models)) {
    const driver = driverOf(model);
    if (driver.doctorChecks.includes("llama_server_processes")) for (const use of driver.ports(name, model)) ports.set(use.port, name);
  }
  if (ports.size === 0) return [];
  const portList = [...ports.keys()].join(", ");
  const procRoot = options.procRoot ?? "/proc";
  const selfPid = options.selfPid ?? process.pid;
  let found: ServerProcess[];
  try {
    found = await scanLlamaServers(procRoot);
  } catch {
    return [ok(ID, TITLE, `not checked: no ${procRoot} on this system (${process.platform}); local-ai still reaps its own stale child on start`)];
  }
  const ours = found.filter((server) => ports.has(server.port));
  if (ours.length === 0) return [ok(ID, TITLE, `no llama-server process holds a configured port (${portList})`, { ports: [...ports.keys()] })];
  return Promise.all(
    ours.map(async (server): Promise<CheckResult> => {
      const model = ports.get(server.port) ?? "?";
      const key = `llama.models.${model}.port`;
      const data = { pid: server.pid, ppid: server.ppid, port: server.port, model, argv: server.argv.slice(0, 12) };
      const id = `${ID}.${server.pid}`;
      if (server.ppid === selfPid) return ok(id, TITLE, `pid ${server.pid} on port ${server.port} (model ${model}) is this local-ai's own child`, data);
      const parent = await liveParent(procRoot, server.ppid);
      if (parent === null) {
        return warn(
          id,
          TITLE,
          `llama-server pid ${server.pid} holds port ${server.port} of model ${model} and its parent is gone (a leftover of a crashed run)`,
          `kill ${server.pid} (local-ai also reaps its own stale child on start)`,
          data,
        );
      }
      const owner = parent.join(" ").slice(0, 120);
      return warn(
        id,
        TITLE,
        `llama-server pid ${server.pid} holds port ${server.port} of model ${model}; it was started by pid ${server.ppid} (${owner})`,
        `if pid ${server.ppid} is not a local-ai you are running, kill ${server.pid}; or set ${key} to a free port`,
        { ...data, parent_argv: parent.slice(0, 12) },
      );
    }),
  );
}

async function scanLlamaServers(procRoot: string): Promise<ServerProcess[]> {
  const entries = await readdir(procRoot);
  const servers: ServerProcess[] = [];
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const pid = Number(entry);
        const argv = await readCommandLine(procRoot, pid);
        if (argv === null || !isLlamaServer(argv)) return;
        const port = portOf(argv);
        if (port === null) return;
        servers.push({ pid, ppid: await readParentPid(procRoot, pid), port, argv });
      }),
  );
  return servers.sort((a, b) => a.pid - b.pid);
}

/** The program itself is llama-server (not, say, an editor with a file of that name open). */
function isLlamaServer(argv: readonly string[]): boolean {
  return path.basename(argv[0] ?? "").startsWith("llama-server");
}

/** `--port 8081` or `--port=8081`; llama-server's default (8080) when absent. */
export function portOf(argv: readonly string[]): number | null {
  for (let index = 1; index < argv.length; index++) {
    const arg = argv[index] ?? "";
    const value = arg === "--port" ? argv[index + 1] : arg.startsWith("--port=") ? arg.slice("--port=".length) : undefined;
    if (value !== undefined) {
      const port = Number(value);
      return Number.isInteger(port) && port > 0 && port < 65536 ? port : null;
    }
  }
  return 8080;
}

/**
 * The parent's argv, or null when the process was orphaned: reparented to pid 1 (init, or a
 * container's init), unless pid 1 is itself a local-ai server (local-ai as a container's entry).
 */
async function liveParent(procRoot: string, ppid: number | null): Promise<string[] | null> {
  if (ppid === null || ppid < 1) return null;
  const argv = await readCommandLine(procRoot, ppid);
  if (argv === null || ppid !== 1) return argv;
  return argv.some((arg) => arg.includes("local-ai") || arg.startsWith("serve-")) ? argv : null;
}

/** argv from /proc/<pid>/cmdline; null when the process is gone or unreadable (another user's). */
async function readCommandLine(procRoot: string, pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(path.join(procRoot, String(pid), "cmdline"), "utf8");
    const argv = raw.split("\0");
    if (argv.at(-1) === "") argv.pop();
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}

/** Field 4 of /proc/<pid>/stat, read after the parenthesised name (which may contain spaces). */
async function readParentPid(procRoot: string, pid: number): Promise<number | null> {
  try {
    const stat = await readFile(path.join(procRoot, String(pid), "stat"), "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}
