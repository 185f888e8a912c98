/** The command that logs in to a remote MCP server, for every message that needs it. */
export function loginCommand(server: string): string {
  return `local-ai mcp login ${server}`;
}

/**
 * A remote server wants an OAuth login that this process may not start (only `local-ai mcp
 * login` opens the browser flow). The message is what the model and the user read.
 */
export class LoginRequiredError extends Error {
  constructor(readonly server: string) {
    super(`MCP server "${server}" needs a login: run \`${loginCommand(server)}\``);
    this.name = "LoginRequiredError";
  }
}

/** True for a LoginRequiredError anywhere in the cause chain (the SDK may wrap it). */
export function isLoginRequired(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof LoginRequiredError) return true;
  }
  return false;
}
