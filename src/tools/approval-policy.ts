import type { ToolDescriptor } from "./tool-types.js";

/**
 * Whether a server's `requires_approval` setting covers one of its tools: `true` covers every
 * tool, a list covers the tools it names by their name on the server (not the exposed name,
 * which may have changed to resolve a clash).
 */
export function serverRequiresApproval(setting: boolean | readonly string[], remoteName: string): boolean {
  return typeof setting === "boolean" ? setting : setting.includes(remoteName);
}

/**
 * The approval policy in one place, so every front door agrees: a flagged tool needs approval
 * unless the request said `approve_execution: true`. Pure; the agent loop decides what to do
 * (pause, deny) when this returns true.
 */
export function needsApproval(descriptor: Pick<ToolDescriptor, "requiresApproval">, approveExecution: boolean): boolean {
  return descriptor.requiresApproval && !approveExecution;
}
