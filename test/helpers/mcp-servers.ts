import { mkdtemp } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { McpServerConfig } from "../../src/config/schema.js";
import { childrenOf } from "./process-children.js";

/** Server configs for the tests: the real npm servers, and our SDK fixture server. */

const require = createRequire(import.meta.url);

/** Resolves a package's own file through its package.json (its `exports` may hide dist/). */
function packageFile(pkg: string, file: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
}

export function serverConfig(args: string[], overrides: Partial<McpServerConfig> = {}): McpServerConfig {
  return { command: process.execPath, args, env: {}, cwd: null, requires_approval: [], timeout_ms: 15_000, ...overrides };
}

/** @modelcontextprotocol/server-everything over stdio (its bin is dist/index.js, transport arg `stdio`). */
export function everythingServer(overrides: Partial<McpServerConfig> = {}): McpServerConfig {
  return serverConfig([packageFile("@modelcontextprotocol/server-everything", "dist/index.js"), "stdio"], overrides);
}

/** @modelcontextprotocol/server-filesystem limited to `root`. */
export function filesystemServer(root: string, overrides: Partial<McpServerConfig> = {}): McpServerConfig {
  return serverConfig([packageFile("@modelcontextprotocol/server-filesystem", "dist/index.js"), root], overrides);
}

export const FIXTURE_SERVER_PATH = fileURLToPath(new URL("./mcp-test-server.js", import.meta.url));

export function fixtureServer(extraArgs: string[] = [], overrides: Partial<McpServerConfig> = {}): McpServerConfig {
  return serverConfig([FIXTURE_SERVER_PATH, ...extraArgs], overrides);
}

export function tempRoot(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), "local-ai-mcp-"));
}

/** True while the pid exists (zombies excluded once reaped by Node). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A bounded poll (20 ms apart) for state that has no event to wait on from here: a grandchild
 * process's exit, a line an MCP server wrote to its stderr reaching our logger.
 */
export async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Pids of this process's live children, to prove nothing was left behind (never vacuous: see process-children.ts). */
export function childPids(): Promise<number[]> {
  return childrenOf(process.pid);
}
