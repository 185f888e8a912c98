import { matchTools } from "./tool-glob.js";
import type { ToolCallResult, ToolDescriptor, ToolProvider } from "./tool-types.js";

/**
 * The tools one caller may run (an API key's `tools`), whoever offers them: globs as in
 * `agents.<name>.tools`. `holder` names the caller in the refusal the model reads
 * (`API key "ci"`); it never carries a secret.
 */
export interface ToolScope {
  holder: string;
  patterns: readonly string[];
}

/**
 * A provider whose calls outside the scope are refused as tool errors the model sees (the agent
 * loop asks `refusal` before approval and before running), while `list` is unchanged: the model
 * is offered the agent's tools whatever the caller, so a prompt (and its KV cache) does not
 * depend on who sent it. The wrapped provider belongs to its owner: `close` leaves it running.
 */
export class ScopedToolProvider implements ToolProvider {
  constructor(
    private readonly inner: ToolProvider,
    private readonly scope: ToolScope,
  ) {}

  start(signal?: AbortSignal): Promise<void> {
    return this.inner.start(signal);
  }

  list(patterns: readonly string[]): ToolDescriptor[] {
    return this.inner.list(patterns);
  }

  async call(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolCallResult> {
    const denied = this.denial(name);
    if (denied !== null) return { status: "error", content: denied, retryable: false };
    return this.inner.call(name, args, options);
  }

  async refusal(name: string, args: Record<string, unknown>): Promise<string | null> {
    return this.denial(name) ?? (await this.inner.refusal?.(name, args)) ?? null;
  }

  async close(): Promise<void> {
    // Not ours to close: the runtime's (or the session's) provider outlives one turn.
  }

  /** Why the scope forbids the tool; null for a tool it allows, or one that does not exist (the loop reports that). */
  private denial(name: string): string | null {
    const descriptor = this.inner.list(["*"]).find((tool) => tool.name === name);
    if (descriptor === undefined || matchTools([descriptor], this.scope.patterns).tools.length > 0) return null;
    return `${this.scope.holder} may not run the tool "${name}"`;
  }
}

/** The provider as a turn with this scope sees it (the provider itself where nothing is scoped). */
export function scopeTools(provider: ToolProvider, scope: ToolScope | undefined): ToolProvider {
  return scope === undefined ? provider : new ScopedToolProvider(provider, scope);
}
