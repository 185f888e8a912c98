import type { Logger } from "pino";
import { SessionRunner } from "../../agent/session-runner.js";
import type { Config } from "../../config/schema.js";
import type { RuntimeHealth } from "../../diagnostics/runtime-health.js";
import { EngineRegistry } from "../../engine/create-engine.js";
import type { ModelFileSource } from "../../engine/model-file.js";
import { LlamaRuntime } from "../../engine/embedded/llama-runtime.js";
import { validateGguf } from "../../engine/plan/validate-gguf.js";
import type { HelpProbe } from "../../engine/llama-server/help-probe.js";
import type { MetricsRecorder } from "../../shared/metrics-recorder.js";
import type { ChildRegistry } from "../../shared/process/child-registry.js";
import { kvCacheRoot } from "../../engine/embedded/kv-cache-dir.js";
import { removeSavedStates } from "../../engine/embedded/kv-state-files.js";
import { createStore } from "../../store/create-store.js";
import type { SessionCatalog } from "../../store/store-types.js";
import { CompositeToolProvider } from "../../tools/composite-tool-provider.js";
import { McpAuthFiles } from "../../store/mcp-auth-files.js";
import { McpAuth } from "../../tools/mcp/oauth/mcp-auth.js";
import { McpToolProvider } from "../../tools/mcp/mcp-tool-provider.js";
import type { SessionToolsRequest, ToolProvider } from "../../tools/tool-types.js";
import type { ModelMemory } from "./model-memory.js";

/** Everything behind a turn, built once from a valid config. */
export interface AgentCore {
  runner: SessionRunner;
  engines: EngineRegistry;
  tools: McpToolProvider;
  llama: LlamaRuntime;
  /** Session meta (ACP: cwd, title) in data_dir. */
  catalog: SessionCatalog;
  /**
   * A session's tools: the config's servers (shared, never closed by it), then the session's own
   * servers and providers, which its `close()` stops. Passed to `runTurn` as `tools`.
   */
  sessionTools(request: SessionToolsRequest): ToolProvider;
  /**
   * Deletes a stored session: its folder (history, checkpoints, meta; under its lock, so after a
   * turn of another process ends), its KV states (saved, and held by a loaded model) and its turns
   * in the user's memory index. False when it had no folder.
   */
  deleteSession(userId: string, sessionId: string): Promise<boolean>;
  /** Eager start (serve-http): the default agent's engine, every MCP server, the default user's memory. */
  warmUp(signal?: AbortSignal): Promise<void>;
  /** Engines created so far and every MCP server, for /health. */
  health(): Pick<RuntimeHealth, "engines" | "tools" | "memory">;
  close(): Promise<void>;
}

/** What the runtime hands the core; each is owned (and closed or disposed) by the runtime. */
export interface AgentCoreDeps {
  logger: Logger;
  env: Readonly<Record<string, string | undefined>>;
  /** The runtime's one node-llama-cpp instance (shared with plan and doctor; not disposed here). */
  llama: LlamaRuntime;
  /** The runtime's child processes (its exit hook kills what close() did not stop). */
  children: ChildRegistry;
  helpProbe: HelpProbe;
  /** Finds (or, for download: auto, fetches) the file of a model whose path is a reference. */
  modelFile?: ModelFileSource;
  /** The memory budget and each model's estimate (the scheduler's figures). */
  memory?: ModelMemory;
  /** Where the engines and the agent report (docs/operations.md); nothing is reported without it. */
  metrics?: MetricsRecorder;
}

export function createAgentCore(config: Config, deps: AgentCoreDeps): AgentCore {
  const { logger, env, llama, modelFile } = deps;
  const engines = new EngineRegistry({
    config,
    logger,
    llama,
    children: deps.children,
    helpProbe: deps.helpProbe,
    validateModel: async (path) => {
      await validateGguf(path);
    },
    ...(modelFile ? { modelFile } : {}),
    ...(deps.memory ? { memory: deps.memory } : {}),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
  // Remote servers' OAuth logins (made by `local-ai mcp login`, or by ACP through mcpLogin): never a browser flow from here.
  const auth = new McpAuth({ store: new McpAuthFiles(config.app.data_dir), logger });
  const tools = new McpToolProvider(config.mcp.servers, { logger, env, auth, elicitationTimeoutMs: config.mcp.elicitation_timeout_s * 1000 });
  const store = createStore(config.app.data_dir, logger);
  const runner = new SessionRunner({
    config,
    engineFor: (name) => engines.get(name),
    tools,
    store: store.sessions,
    memory: store.memory,
    logger,
    history: store.sessions,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
  return {
    runner,
    engines,
    tools,
    llama,
    catalog: store.catalog,
    // One MCP client implementation for both: a session's servers are an McpToolProvider of their own.
    sessionTools: (request) =>
      new CompositeToolProvider([
        { provider: tools, owned: false },
        // An editor's own servers carry the editor's credentials (headers): no stored logins for them.
        { provider: new McpToolProvider(request.servers, { logger, env, elicitationTimeoutMs: config.mcp.elicitation_timeout_s * 1000 }), owned: true },
        ...request.providers.map((provider) => ({ provider, owned: true })),
      ]),
    deleteSession: async (userId, sessionId) => {
      // Checked first: taking the lock makes the folder of a session that has none.
      if (!(await store.catalog.exists(userId, sessionId))) return false;
      await store.sessions.withSessionLock(userId, sessionId, () => store.catalog.remove(userId, sessionId));
      // The turns' conversation key (session-turn.ts): the engines' KV states are kept under it.
      const cacheKey = `${userId}/${sessionId}`;
      await Promise.all([...engines.created().values()].map((engine) => engine.forgetConversation?.(cacheKey) ?? Promise.resolve()));
      await removeSavedStates(kvCacheRoot(config.app.data_dir), cacheKey);
      store.memory.forgetSession?.(userId, sessionId);
      return true;
    },
    warmUp: async (signal) => {
      await Promise.all([runner.warmUp(undefined, signal), store.memory.ensureUser("default_user")]);
    },
    health: () => ({
      engines: Object.fromEntries([...engines.created()].map(([name, engine]) => [name, engine.health()])),
      tools: tools.status(),
      memory: { budget: engines.scheduler.budgetIfKnown(), used: engines.scheduler.used() },
    }),
    // Children (llama-server, MCP servers) and models; the runtime disposes node-llama-cpp after.
    close: async () => {
      await Promise.allSettled([engines.closeAll(), tools.close()]);
    },
  };
}
