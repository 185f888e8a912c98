import type { Readable, Writable } from "node:stream";
import { runAcpServer } from "../../acp/acp-server.js";
import type { AcpDeps } from "../../acp/acp-deps.js";
import { ACP_USER } from "../../acp/acp-connection-state.js";
import type { ConfigState } from "../../config/read-config-file.js";
import type { Config, ModelConfig } from "../../config/schema.js";
import { describeModel } from "../../engine/describe-model.js";
import type { LazyRuntime } from "../runtime/lazy-runtime.js";
import { mcpLogin } from "../oauth/mcp-login.js";
import { serveStdioLines, type StdioServingOptions } from "./stdio-serving.js";

export interface ServeStdioAcpOptions extends StdioServingOptions {
  /** The process's stdin and stdout: every byte on `output` is an ACP message. */
  input: Readable;
  output: Writable;
}

/**
 * `serve-stdio --protocol acp`: an editor launches this and talks ACP on stdin/stdout. The same
 * process rules as the other stdio protocols: stdout carries only protocol messages, logs go to
 * stderr, the stdio limits apply, the runtime is built on the first method that needs it.
 * Resolves with the exit code once everything is closed and flushed.
 */
export function serveStdioAcp(options: ServeStdioAcpOptions): Promise<number> {
  return serveStdioLines(options, "acp", ({ serving, info, runtime, limits, configState }) =>
    runAcpServer({
      input: options.input,
      output: options.output,
      logger: serving.logger,
      limits,
      signal: serving.signal,
      deps: acpDeps(runtime, configState, info.version, limits.coalesceMs, serving.logger),
    }),
  );
}

/** The runtime as the ACP front door sees it. */
function acpDeps(runtime: LazyRuntime, configState: Promise<ConfigState>, version: string, coalesceMs: number, logger: AcpDeps["logger"]): AcpDeps {
  return {
    agentInfo: { name: "local-ai", version },
    logger,
    coalesceMs,
    core: async () => {
      const built = await runtime.get();
      // Throws config_missing / config_invalid (what session/new then answers) without a valid config.
      const runner = built.sessionRunner();
      if (built.configState.status !== "loaded") throw new Error("unreachable: a session runner needs a loaded config");
      const { config } = built.configState;
      // The runtime's model table: the config's models and the downloaded ones adopted so far.
      const modelConfig = (name: string): ModelConfig | undefined => built.liveConfig().llama.models[name];
      const thinking = new Map<string, Promise<boolean>>();
      return {
        runner,
        catalog: built.sessionCatalog(),
        sessionTools: (request) => built.sessionTools(request),
        maxToolOutputBytes: config.app.max_tool_output_bytes,
        contextSize: (name) => {
          const model = modelConfig(name);
          return model === undefined ? 0 : describeModel(model, built.engines().created().get(name)).contextLength;
        },
        models: {
          agents: () => runner.agents(),
          downloaded: () => built.downloadedModels().list(),
          // Read once per model (the GGUF's metadata): the file does not change under a running process.
          thinks: (name) => {
            let known = thinking.get(name);
            if (known === undefined) thinking.set(name, (known = built.modelThinks(name)));
            return known;
          },
          canStopThinking: (name) => modelConfig(name)?.engine !== "embedded",
        },
        deleteSession: (sessionId) => built.deleteSession(ACP_USER, sessionId),
        mcpLogins: {
          needing: () => built.mcpLogins().needing(),
          login: async (server, showUrl, signal) => {
            // The same flow as `local-ai mcp login` (its default wait), cut short when the connection ends.
            await mcpLogin({ config, server, logger, showUrl, timeoutMs: ACP_LOGIN_TIMEOUT_MS, signal });
            await built.mcpLogins().reconnect(server);
          },
        },
      };
    },
    takesImages: async () => {
      const state = await configState;
      if (state.status !== "loaded") return false;
      const model = defaultModel(state.config);
      return model !== null && describeModel(model.config).capabilities.vision;
    },
  };
}

/** How long an ACP-started MCP login waits for the browser's redirect (as `mcp login --timeout`'s default). */
const ACP_LOGIN_TIMEOUT_MS = 300_000;

/** The model of the default (first) agent, as a session uses it. */
function defaultModel(config: Config): { name: string; config: ModelConfig } | null {
  const agent = Object.values(config.agents)[0];
  const model = agent === undefined ? undefined : config.llama.models[agent.model];
  return agent === undefined || model === undefined ? null : { name: agent.model, config: model };
}
