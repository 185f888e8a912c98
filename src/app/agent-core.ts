import type { Logger } from "pino";
import { SessionRunner } from "../agent/session-runner.js";
import type { Config } from "../config/schema.js";
import { EngineRegistry } from "../engine/create-engine.js";
import { LlamaRuntime } from "../engine/embedded/llama-runtime.js";
import { validateGguf } from "../engine/plan/validate-gguf.js";
import { createStore } from "../store/create-store.js";
import { McpToolProvider } from "../tools/mcp/mcp-tool-provider.js";

/** Everything behind a turn, built once from a valid config. */
export interface AgentCore {
  runner: SessionRunner;
  engines: EngineRegistry;
  tools: McpToolProvider;
  llama: LlamaRuntime;
  close(): Promise<void>;
}

export function createAgentCore(config: Config, logger: Logger, env: Readonly<Record<string, string | undefined>>): AgentCore {
  const llama = new LlamaRuntime(logger);
  const engines = new EngineRegistry({
    config,
    logger,
    llama,
    validateModel: async (path) => {
      await validateGguf(path);
    },
  });
  const tools = new McpToolProvider(config.mcp.servers, { logger, env });
  const store = createStore(config.app.data_dir, logger);
  const runner = new SessionRunner({
    config,
    engineFor: (name) => engines.get(name),
    tools,
    store: store.sessions,
    memory: store.memory,
    logger,
  });
  return {
    runner,
    engines,
    tools,
    llama,
    // Children first (llama-server, MCP servers), then the in-process model.
    close: async () => {
      await Promise.allSettled([engines.closeAll(), tools.close()]);
      await llama.dispose();
    },
  };
}
