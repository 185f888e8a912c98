import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** This package's CLI entry, next to the client in dist/src. */
const OWN_CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));

/**
 * Where the CLI runs from. Inside an Electron app packaged with asar, code is read from
 * `app.asar` but native binaries (node-llama-cpp's) cannot be loaded from it; when the package
 * was unpacked (`asarUnpack`), the child runs the unpacked copy so its imports resolve next to
 * the unpacked binaries.
 */
export function resolveCliPath(cliPath = OWN_CLI, exists: (file: string) => boolean = existsSync): string {
  const marker = `${path.sep}app.asar${path.sep}`;
  const at = cliPath.indexOf(marker);
  if (at === -1) return cliPath;
  const unpacked = `${cliPath.slice(0, at)}${path.sep}app.asar.unpacked${path.sep}${cliPath.slice(at + marker.length)}`;
  return exists(unpacked) ? unpacked : cliPath;
}

export interface SpawnSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * The command line and environment of the child. By default this package's own
 * `local-ai serve-stdio` run by `process.execPath`: the host's Node, or in Electron the Electron
 * binary as Node (`ELECTRON_RUN_AS_NODE=1`, set here when the host is Electron).
 */
export function spawnSpec(options: { command?: string; args?: readonly string[]; config?: string; env?: Readonly<Record<string, string | undefined>> }): SpawnSpec {
  const command = options.command ?? process.execPath;
  const args = options.args !== undefined ? [...options.args] : [resolveCliPath(), "serve-stdio"];
  if (options.config !== undefined) args.push("--config", options.config);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (command === process.execPath && process.versions.electron !== undefined) env.ELECTRON_RUN_AS_NODE = "1";
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return { command, args, env };
}
