import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { ToolDescriptor, ToolProvider } from "../tools/tool-types.js";
import type { EmitEvent } from "./events.js";
import { toolSpecsOf } from "./turn-settings.js";

/**
 * The agent's tools as each model step sees them. MCP servers may change their tool list
 * mid-turn (`notifications/tools/list_changed`); before each step the change is awaited and
 * listed again, and each server whose offered tools differ from what the last step saw gets a
 * `tools_changed` event from this turn: the one whose next step sees the new list. A step already
 * running keeps the list it was given.
 */
export class ToolListWatch {
  private descriptors: ToolDescriptor[];
  private byName: Map<string, ToolDescriptor>;

  constructor(
    private readonly tools: ToolProvider,
    /** The agent's `tools` patterns; null: the list is fixed (client tools, tool_choice none). */
    private readonly patterns: readonly string[] | null,
    initial: readonly ToolDescriptor[],
  ) {
    this.descriptors = [...initial];
    this.byName = new Map(initial.map((descriptor) => [descriptor.name, descriptor]));
  }

  /** The descriptors by exposed name, for the tool step. */
  get current(): ReadonlyMap<string, ToolDescriptor> {
    return this.byName;
  }

  specs(): ToolSpec[] {
    return toolSpecsOf(this.descriptors);
  }

  /** Called before a model step: waits for announced refreshes, then lists again. */
  async beforeStep(step: number, signal: AbortSignal, emit: EmitEvent): Promise<void> {
    if (this.patterns === null || this.tools.refreshed === undefined) return;
    try {
      await this.tools.refreshed(signal);
    } catch (error) {
      if (signal.aborted) throw new RuntimeError("cancelled", "Request cancelled");
      throw error;
    }
    const next = this.tools.list(this.patterns);
    const before = byServer(this.descriptors);
    const after = byServer(next);
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((server) => fingerprint(before.get(server)) !== fingerprint(after.get(server)));
    if (changed.length === 0) return;
    this.descriptors = next;
    this.byName = new Map(next.map((descriptor) => [descriptor.name, descriptor]));
    for (const server of changed) emit({ event: "tools_changed", step, server, tools: (after.get(server) ?? []).map((tool) => tool.name) });
  }
}

function byServer(descriptors: readonly ToolDescriptor[]): Map<string, ToolDescriptor[]> {
  const grouped = new Map<string, ToolDescriptor[]>();
  for (const descriptor of descriptors) grouped.set(descriptor.server, [...(grouped.get(descriptor.server) ?? []), descriptor]);
  return grouped;
}

/** What the model sees of a server's tools: names, descriptions, schemas, and approval. */
function fingerprint(descriptors: readonly ToolDescriptor[] | undefined): string {
  return JSON.stringify(descriptors ?? []);
}
