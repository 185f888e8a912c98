import { chunk, sendData, sendJson, startSse, startUpstream, usageChunk, type RecordedRequest, type ScriptedUpstream } from "./openai-sse-upstream.js";

/** One model step as the scripted upstream answers it. */
export type UpstreamStep =
  /** Text deltas (after `reasoning_content` deltas, if any), then stop (or `finish`: "length", "content_filter"), with usage. */
  | { text: string[]; finish?: string; reasoning?: string[] }
  /** One tool call (its arguments as JSON), finish_reason tool_calls. */
  | { call: { id: string; name: string; arguments: Record<string, unknown> } }
  /** Text deltas, then the stream stays open until the client hangs up (for cancellation). */
  | { hang: string[] }
  /** Text deltas, then the connection is cut without an end (an upstream that fails mid-stream). */
  | { cut: string[] };

export interface AgentUpstream extends ScriptedUpstream {
  /** The chat completion requests, in order (one per model step). */
  chats(): RecordedRequest[];
  /** Appends steps for the requests still to come. */
  push(...steps: UpstreamStep[]): void;
}

/**
 * An OpenAI-compatible upstream that answers each chat completion with the next scripted step,
 * so a test knows exactly which tool the model calls with which arguments. `/models` lists
 * `test-model`. A request beyond the script gets the text "(no more steps)".
 */
export async function startAgentUpstream(steps: UpstreamStep[] = []): Promise<AgentUpstream> {
  const queue = [...steps];
  let chats = 0;
  const upstream = await startUpstream((req, res) => {
    if (req.method === "GET" && req.url?.endsWith("/models") === true) {
      sendJson(res, 200, { object: "list", data: [{ id: "test-model", object: "model", created: 1, owned_by: "test" }] });
      return;
    }
    chats++;
    const step = queue.shift() ?? { text: ["(no more steps)"] };
    startSse(res);
    if ("call" in step) {
      sendData(res, chunk({ role: "assistant", tool_calls: [{ index: 0, id: step.call.id, type: "function", function: { name: step.call.name, arguments: JSON.stringify(step.call.arguments) } }] }));
      sendData(res, chunk({}, "tool_calls"));
      sendData(res, usageChunk(40 + chats, 10));
      sendData(res, "[DONE]");
      res.end();
      return;
    }
    const deltas = "text" in step ? step.text : "hang" in step ? step.hang : step.cut;
    sendData(res, chunk({ role: "assistant", content: "" }));
    for (const delta of "text" in step ? (step.reasoning ?? []) : []) sendData(res, chunk({ reasoning_content: delta }));
    for (const delta of deltas) sendData(res, chunk({ content: delta }));
    if ("hang" in step) return;
    if ("cut" in step) {
      // Once the deltas have left (destroy would drop what is still buffered).
      res.write("", () => res.destroy());
      return;
    }
    sendData(res, chunk({}, step.finish ?? "stop"));
    sendData(res, usageChunk(40 + chats, deltas.length));
    sendData(res, "[DONE]");
    res.end();
  });
  return {
    ...upstream,
    chats: () => upstream.requests.filter((request) => request.method === "POST"),
    push: (...more) => queue.push(...more),
  };
}

/** The tool message the upstream got for a call (in a later request): what the model was told. */
export function toolResultSent(upstream: AgentUpstream, callId: string): string | undefined {
  for (const request of upstream.chats()) {
    const messages = (request.body as { messages: Array<{ role: string; tool_call_id?: string; content?: string }> }).messages;
    const found = messages.find((m) => m.role === "tool" && m.tool_call_id === callId);
    if (found !== undefined) return found.content;
  }
  return undefined;
}

/** The `openai` engine pointed at an upstream, for config.yaml. */
export function openaiModelYaml(baseUrl: string, agentLines: string[] = []): string {
  return [
    "llama:",
    "  models:",
    "    default:",
    "      engine: openai",
    `      base_url: ${JSON.stringify(baseUrl)}`,
    "      model: test-model",
    "      ctx_size: 8192",
    "agents:",
    "  assistant:",
    "    temperature: 0",
    ...agentLines,
    "",
  ].join("\n");
}
