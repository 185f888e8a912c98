// A network namespace with nothing but the loopback interface, for running real clients (Codex
// CLI) that would otherwise reach the internet: `unshare --net` (root, or unprivileged user
// namespaces) gives a fresh namespace whose only interface is `lo`, down; the wrapper brings it up
// and execs the command, so every process it starts shares the namespace and can reach
// 127.0.0.1 and nothing else.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

export const NETNS_UNAVAILABLE_MESSAGE = (reason: string): string =>
  [
    "",
    "==================================================================================",
    "  `unshare --net` is NOT AVAILABLE - the tests that run the real Codex CLI inside a",
    "  loopback-only network namespace cannot run (they never run it outside one).",
    `  Reason: ${reason}`,
    "  They need util-linux `unshare`, iproute2 `ip` and root (or user namespaces).",
    "==================================================================================",
    "",
  ].join("\n");

/** The wrapped command: `unshare --net -- bash -c 'ip link set lo up && exec "$0" "$@"' cmd args...`. */
export function inLoopbackNetns(command: string, args: readonly string[]): { file: string; args: string[] } {
  return { file: "unshare", args: ["--net", "--", "bash", "-c", 'ip link set lo up && exec "$0" "$@"', command, ...args] };
}

/** Null when a loopback-only namespace can be made here, else why not (probed once, ~10 ms). */
export function loopbackNetnsUnavailable(): string | null {
  const probe = inLoopbackNetns("cat", ["/proc/self/net/dev"]);
  const run = spawnSync(probe.file, probe.args, { encoding: "utf8", timeout: 10_000 });
  if (run.error) return `${probe.file}: ${run.error.message}`;
  if (run.status !== 0) return `unshare --net exited ${String(run.status)}: ${run.stderr.trim()}`;
  const links = interfacesOf(run.stdout);
  if (links.join(",") !== "lo") return `the new namespace has interfaces ${links.join(", ")}, expected lo only`;
  return null;
}

/** The network interfaces this process sees (its own namespace's, unlike /sys/class/net). */
export function networkInterfaces(): string[] {
  return interfacesOf(readFileSync("/proc/self/net/dev", "utf8"));
}

/** Throws unless this process is in a namespace whose only interface is loopback. */
export function assertOnlyLoopback(what: string): void {
  const links = networkInterfaces();
  if (links.join(",") !== "lo") {
    throw new Error(`refusing to run ${what}: this process sees the interfaces ${links.join(", ")}, not loopback only (run it through inLoopbackNetns)`);
  }
}

/** Interface names from /proc/net/dev (two header lines, then "  name: counters"). */
function interfacesOf(procNetDev: string): string[] {
  return procNetDev
    .split("\n")
    .slice(2)
    .map((line) => line.split(":")[0]?.trim() ?? "")
    .filter((name) => name !== "");
}
