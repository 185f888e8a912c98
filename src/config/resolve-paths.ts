import path from "node:path";
import { isRemoteServer } from "./mcp-server-kind.js";
import { isModelReference } from "./model-reference.js";
import type { Config } from "./schema.js";

/** A bare command name (no separator) is looked up on PATH later; anything else is a path. */
function isPathLike(value: string): boolean {
  return value.includes("/") || value.includes("\\") || value.startsWith(".");
}

/**
 * Resolves relative paths against the config file's folder, so a config means the same thing
 * whatever the current directory of the process is. MCP servers default to that folder as cwd,
 * so `args: ["."]` names the config's folder too.
 */
export function resolveConfigPaths(config: Config, baseDir: string): Config {
  const resolve = (value: string): string => path.resolve(baseDir, value);
  return {
    ...config,
    app: {
      ...config.app,
      data_dir: resolve(config.app.data_dir),
      models_dir: config.app.models_dir === null ? path.join(resolve(config.app.data_dir), "models") : resolve(config.app.models_dir),
    },
    llama: {
      ...config.llama,
      binary: isPathLike(config.llama.binary) ? resolve(config.llama.binary) : config.llama.binary,
      models: Object.fromEntries(
        Object.entries(config.llama.models).map(([name, model]) => [
          name,
          // A reference (URL, hf:) is not a path: src/models resolves it to a file under models_dir.
          { ...model, path: model.path === null || isModelReference(model.path) ? model.path : resolve(model.path) },
        ]),
      ),
    },
    http: {
      ...config.http,
      bearer_token_file: config.http.bearer_token_file === null ? null : resolve(config.http.bearer_token_file),
      keys: config.http.keys.map((key) => ({ ...key, token_file: key.token_file === null ? null : resolve(key.token_file) })),
    },
    mcp: {
      ...config.mcp,
      servers: Object.fromEntries(
        Object.entries(config.mcp.servers).map(([name, server]) => [
          name,
          isRemoteServer(server)
            ? { ...server, oauth: server.oauth?.client_secret_file == null ? server.oauth : { ...server.oauth, client_secret_file: resolve(server.oauth.client_secret_file) } }
            : { ...server, cwd: resolve(server.cwd ?? ".") },
        ]),
      ),
    },
  };
}
