import { methods, type PermissionOption } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import type { ApprovalCallback, ApprovalRequest } from "../agent/events.js";
import type { AcpSession } from "./acp-session.js";
import type { AcpTurnUpdates } from "./acp-updates.js";
import { EDITOR_TOOL_NAMES } from "./editor-tools.js";

export const PERMISSION_OPTIONS = {
  allowOnce: "allow_once",
  allowAlways: "allow_always",
  rejectOnce: "reject_once",
  rejectAlways: "reject_always",
} as const;

/**
 * What an "always" answer covers: the tool, for every call in the session; for `run_command`,
 * the exact command line, since "always allow running commands" would allow anything at all.
 */
export function permissionKey(request: Pick<ApprovalRequest, "tool" | "args">): string {
  if (request.tool !== EDITOR_TOOL_NAMES.run) return request.tool;
  const args = Array.isArray(request.args.args) ? request.args.args.map(String) : [];
  return `${request.tool}\u0000${JSON.stringify([String(request.args.command), ...args])}`;
}

function optionsFor(request: ApprovalRequest): PermissionOption[] {
  const scope = request.tool === EDITOR_TOOL_NAMES.run ? "this command" : request.tool;
  return [
    { optionId: PERMISSION_OPTIONS.allowOnce, name: "Allow once", kind: "allow_once" },
    { optionId: PERMISSION_OPTIONS.allowAlways, name: `Always allow ${scope} in this session`, kind: "allow_always" },
    { optionId: PERMISSION_OPTIONS.rejectOnce, name: "Reject", kind: "reject_once" },
    { optionId: PERMISSION_OPTIONS.rejectAlways, name: `Always reject ${scope} in this session`, kind: "reject_always" },
  ];
}

/**
 * The core's approval callback as ACP's `session/request_permission`: the call is announced
 * (`tool_call`, pending), the editor asks its user, the turn goes on with the answer. "Always"
 * answers are remembered by the session and not asked again. A cancel withdraws the question
 * (`$/cancel_request`, and the SDK stops waiting), and the loop then runs nothing.
 */
export function permissionAsker(session: AcpSession, updates: AcpTurnUpdates, logger: Logger): ApprovalCallback {
  return async (request, signal) => {
    const key = permissionKey(request);
    const remembered = session.remembered.get(key);
    if (remembered !== undefined) return remembered;
    const { updates: announce, toolCall } = updates.permission(request);
    for (const update of announce) session.updates.send(update);
    let outcome;
    try {
      ({ outcome } = await session.client.request(
        methods.client.session.requestPermission,
        { sessionId: session.id, toolCall, options: optionsFor(request) },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      ));
    } catch (error) {
      // Withdrawn by a cancel (the loop sees the signal), or a client that cannot ask: run nothing.
      if (!signal.aborted) logger.warn({ err: error, tool: request.tool }, "session/request_permission failed; the call is declined");
      return "decline";
    }
    if (outcome.outcome === "cancelled") return "decline";
    switch (outcome.optionId) {
      case PERMISSION_OPTIONS.allowAlways:
        session.remembered.set(key, "approve");
        return "approve";
      case PERMISSION_OPTIONS.allowOnce:
        return "approve";
      case PERMISSION_OPTIONS.rejectAlways:
        session.remembered.set(key, "decline");
        return "decline";
      case PERMISSION_OPTIONS.rejectOnce:
        return "decline";
      default:
        logger.warn({ option: outcome.optionId, tool: request.tool }, "session/request_permission answered an option that was not offered; the call is declined");
        return "decline";
    }
  };
}
