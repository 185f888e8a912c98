import type { EngineHealth } from "../engine/engine.js";
import type { MemoryNeed } from "../engine/scheduler/scheduler-types.js";
import type { McpServerStatus } from "../tools/mcp/mcp-tool-provider.js";

/**
 * What the runtime knows about readiness (src/app/runtime/runtime.ts makes it); serve-http turns it into
 * the /health body (src/http/routes/health-status.ts). Here, the lowest layer both can import that sees
 * both engines and tools.
 */
export interface RuntimeHealth {
  warmUp: "idle" | "starting" | "ready" | "failed";
  warmUpError?: string;
  /** The default agent's model name. */
  defaultModel: string;
  engines: Record<string, EngineHealth>;
  tools: McpServerStatus[];
  /** llama.memory_budget (null until the first load resolves it) and what the loaded models hold of it. */
  memory?: MemoryUse;
}

export interface MemoryUse {
  budget: MemoryNeed | null;
  used: MemoryNeed;
}
