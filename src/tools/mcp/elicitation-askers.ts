import type { Logger } from "../../logging/create-logger.js";
import type { ElicitationAnswer, ToolCallOptions } from "../tool-types.js";

const DEFAULT_ELICITATION_TIMEOUT_MS = 600_000;

type Asker = NonNullable<ToolCallOptions["elicit"]>;

/**
 * Where one server's form-mode questions (`elicitation/create`) go: the calls in flight that can
 * ask the user, newest last. MCP does not say which call a question belongs to (over stdio nothing
 * ties it to one), so it goes to the newest; with none, after `mcp.elicitation_timeout_s`, or when
 * the turn is cancelled, the server gets a decline; the user's own `cancel` (dismissed without
 * choosing) reaches it as `cancel`.
 */
export class ElicitationAskers {
  private readonly askers: Asker[] = [];

  constructor(
    private readonly server: string,
    private readonly logger: Logger,
    private readonly timeoutMs = DEFAULT_ELICITATION_TIMEOUT_MS,
  ) {}

  /** Runs `work` (a tool call) with `asker` able to answer the server's questions meanwhile. */
  async during<T>(asker: Asker | undefined, work: () => Promise<T>): Promise<T> {
    if (asker === undefined) return work();
    this.askers.push(asker);
    try {
      return await work();
    } finally {
      this.askers.splice(this.askers.lastIndexOf(asker), 1);
    }
  }

  async ask(request: { message: string; requestedSchema: Record<string, unknown> }, signal: AbortSignal): Promise<ElicitationAnswer> {
    const asker = this.askers.at(-1);
    if (asker === undefined) {
      this.logger.info("elicitation declined: no call in flight can ask the user");
      return { action: "decline" };
    }
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const combined = AbortSignal.any([signal, deadline]);
    const timedOut = new Promise<ElicitationAnswer>((resolve) => combined.addEventListener("abort", () => resolve({ action: "decline" }), { once: true }));
    const answer = await Promise.race([asker({ server: this.server, message: request.message, requested_schema: request.requestedSchema }, combined), timedOut]);
    if (deadline.aborted) this.logger.info({ timeout_ms: this.timeoutMs }, "elicitation declined: no answer in time");
    return answer.action === "accept" ? { action: "accept", content: answer.content ?? {} } : { action: answer.action === "cancel" ? "cancel" : "decline" };
  }
}
