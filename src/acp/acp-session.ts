import type { AgentContext } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import type { ToolProvider } from "../tools/tool-types.js";
import type { SessionChoice } from "./session-config.js";
import { UpdateSender } from "./update-sender.js";

/** What "allow always" / "reject always" remembered, by approval key (see permissionKey). */
export type RememberedDecision = "approve" | "decline";

/**
 * One ACP session open on this connection: its working directory, its tools (the config's
 * servers, its own MCP servers, the editor's tools), what the user answered "always" to, and the
 * prompt running in it. Closing it cancels that prompt and stops its own MCP servers.
 */
export class AcpSession {
  readonly remembered = new Map<string, RememberedDecision>();
  readonly updates: UpdateSender;
  private running: AbortController | null = null;
  /** Settles when the running prompt has ended (resolved at once when none runs). */
  private ended: Promise<void> = Promise.resolve();
  private endRunning: () => void = () => undefined;
  /** The MCP prompts last sent as `available_commands_update` (JSON), to send only changes. */
  advertised: string | null = null;
  /** The last `available_commands_update` listing (they run one after another). */
  advertising: Promise<void> = Promise.resolve();
  /** Ends the session's subscription to its servers' prompt changes (the config's servers outlive it). */
  unwatchPrompts: (() => void) | null = null;
  private closed = false;

  constructor(
    readonly id: string,
    readonly cwd: string,
    readonly tools: ToolProvider,
    readonly client: AgentContext,
    logger: Logger,
    /** The agent, model and thinking the next prompt runs with (`session/set_config_option`). */
    public choice: SessionChoice = { agent: null, model: null, thinking: true },
  ) {
    this.updates = new UpdateSender(client, id, logger);
  }

  get busy(): boolean {
    return this.running !== null;
  }

  /** Marks a prompt as running; returns its signal (aborted by cancel or close). */
  beginPrompt(): AbortController {
    const controller = new AbortController();
    this.running = controller;
    this.ended = new Promise((resolve) => (this.endRunning = resolve));
    return controller;
  }

  endPrompt(controller: AbortController): void {
    if (this.running !== controller) return;
    this.running = null;
    this.endRunning();
  }

  /** Resolves once no prompt runs (`session/delete` waits for a cancelled one to let go of its files). */
  idle(): Promise<void> {
    return this.ended;
  }

  /** `session/cancel`: the running prompt stops (its pending permission request is withdrawn with it). */
  cancel(reason = "cancelled by the client"): void {
    this.running?.abort(reason);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancel("session closed");
    this.unwatchPrompts?.();
    await this.tools.close();
  }
}
