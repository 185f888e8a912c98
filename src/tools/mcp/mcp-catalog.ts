import type { ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { McpContent, McpMessage, McpPromptInfo, McpResourceList } from "../tool-types.js";
import { describeBlock } from "./call-result.js";
import type { McpConnection } from "./mcp-connection.js";
import { errorText } from "./mcp-session.js";

/**
 * Prompts and resources of the configured servers (MCP `prompts/*`, `resources/*`), listed on
 * demand from each ready server that declares the capability. A server that fails to answer is
 * logged and left out of a listing; a request aimed at it fails with its error.
 */

const MAX_PAGES = 100;

/** Every page of a paginated list (a server that repeats a cursor ends it). */
async function allPages<T>(fetch: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await fetch(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return items;
}

/** The servers that could answer a listing of `capability` now (started, not failed or closed). */
function offering(connections: readonly McpConnection[], capability: "prompts" | "resources"): McpConnection[] {
  return connections.filter((connection) => connection.listed && connection.state !== "closed" && connection.capabilities?.[capability] !== undefined);
}

export async function listPrompts(connections: readonly McpConnection[], signal: AbortSignal | undefined): Promise<McpPromptInfo[]> {
  const lists = await Promise.all(
    offering(connections, "prompts").map(async (connection) => {
      try {
        const client = await connection.liveClient(signal);
        const prompts = await allPages(async (cursor) => {
          const page = await client.listPrompts(cursor === undefined ? {} : { cursor }, signal === undefined ? {} : { signal });
          return { items: page.prompts, nextCursor: page.nextCursor };
        });
        return prompts.map((prompt): McpPromptInfo => ({
          server: connection.server,
          name: prompt.name,
          ...(prompt.description === undefined ? {} : { description: prompt.description }),
          arguments: (prompt.arguments ?? []).map((arg) => ({ name: arg.name, ...(arg.description === undefined ? {} : { description: arg.description }), ...(arg.required === undefined ? {} : { required: arg.required }) })),
        }));
      } catch (error) {
        if (signal?.aborted === true) throw error;
        connection.logFailure("prompts/list", error);
        return [];
      }
    }),
  );
  return lists.flat();
}

export async function getPrompt(connection: McpConnection, name: string, args: Record<string, string>, signal: AbortSignal | undefined): Promise<McpMessage[]> {
  const client = await available(connection, signal);
  try {
    const result = await client.getPrompt({ name, arguments: args }, signal === undefined ? {} : { signal });
    return mergeRoles(result.messages.map((message) => ({ role: message.role, content: toContent(message.content) })));
  } catch (error) {
    if (signal?.aborted === true) throw error;
    throw new RuntimeError("invalid_params", `prompt "${name}" of MCP server "${connection.server}": ${errorText(error)}`, { details: { param: "prompt" } });
  }
}

export async function listResources(connections: readonly McpConnection[], signal: AbortSignal | undefined): Promise<McpResourceList> {
  const lists = await Promise.all(
    offering(connections, "resources").map(async (connection): Promise<McpResourceList> => {
      try {
        const client = await connection.liveClient(signal);
        const options = signal === undefined ? {} : { signal };
        const [resources, templates] = await Promise.all([
          allPages(async (cursor) => {
            const page = await client.listResources(cursor === undefined ? {} : { cursor }, options);
            return { items: page.resources, nextCursor: page.nextCursor };
          }),
          allPages(async (cursor) => {
            const page = await client.listResourceTemplates(cursor === undefined ? {} : { cursor }, options);
            return { items: page.resourceTemplates, nextCursor: page.nextCursor };
          }).catch(() => []),
        ]);
        const server = connection.server;
        return {
          resources: resources.map((r) => ({ server, uri: r.uri, name: r.name, ...optional(r.description, r.mimeType) })),
          templates: templates.map((t) => ({ server, uri_template: t.uriTemplate, name: t.name, ...optional(t.description, t.mimeType) })),
        };
      } catch (error) {
        if (signal?.aborted === true) throw error;
        connection.logFailure("resources/list", error);
        return { resources: [], templates: [] };
      }
    }),
  );
  return { resources: lists.flatMap((list) => list.resources), templates: lists.flatMap((list) => list.templates) };
}

export async function readResource(connection: McpConnection, uri: string, signal: AbortSignal | undefined): Promise<McpContent[]> {
  const client = await available(connection, signal);
  try {
    const result = await client.readResource({ uri }, signal === undefined ? {} : { signal });
    return result.contents.flatMap((contents) => toContent({ type: "resource", resource: contents }));
  } catch (error) {
    if (signal?.aborted === true) throw error;
    throw new RuntimeError("invalid_params", `resource "${uri}" of MCP server "${connection.server}": ${errorText(error)}`, { details: { param: "uri" } });
  }
}

/** The server's client, or a RuntimeError naming the server when it cannot be (re)started. */
async function available(connection: McpConnection, signal: AbortSignal | undefined): ReturnType<McpConnection["liveClient"]> {
  try {
    return await connection.liveClient(signal);
  } catch (error) {
    if (signal?.aborted === true) throw error;
    throw new RuntimeError("internal_error", `MCP server "${connection.server}" is not available: ${errorText(error)}`, { details: { server: connection.server } });
  }
}

/** Text for everything but images (audio, links and resources described as in tool results), so the model gets each with its URI. */
export function toContent(block: ContentBlock): McpContent[] {
  if (block.type === "image") return [{ type: "image", mimeType: block.mimeType, data: block.data }];
  if (block.type === "resource" && "blob" in block.resource && block.resource.mimeType?.startsWith("image/") === true) {
    return [{ type: "text", text: `[resource: ${block.resource.uri}]` }, { type: "image", mimeType: block.resource.mimeType, data: block.resource.blob }];
  }
  return [{ type: "text", text: describeBlock(block) }];
}

/** Consecutive messages of one role become one (a prompt's user text and its image, say). */
function mergeRoles(messages: McpMessage[]): McpMessage[] {
  const merged: McpMessage[] = [];
  for (const message of messages) {
    const last = merged.at(-1);
    if (last !== undefined && last.role === message.role) last.content.push(...message.content);
    else merged.push({ role: message.role, content: [...message.content] });
  }
  return merged;
}

function optional(description: string | undefined, mimeType: string | undefined): { description?: string; mime_type?: string } {
  return { ...(description === undefined ? {} : { description }), ...(mimeType === undefined ? {} : { mime_type: mimeType }) };
}
