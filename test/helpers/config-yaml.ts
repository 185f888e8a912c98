import { stringify } from "yaml";

/** config.yaml's text from its object form (keys as in docs/config.md): the one builder of the tests' configs. */
export function configYaml(config: Record<string, unknown>): string {
  return stringify(config);
}

/**
 * A `llama.models` entry on a local GGUF with the tests' defaults: one thread (the test machine's
 * cores are shared) and a 2048-token context; `settings` adds or overrides keys.
 */
export function localModel(file: string, settings: Record<string, unknown> = {}): Record<string, unknown> {
  return { path: file, threads: 1, ctx_size: 2048, ...settings };
}

/** A `llama.models` entry on an OpenAI-compatible endpoint. */
export function openaiModel(baseUrl: string, model: string): Record<string, unknown> {
  return { engine: "openai", base_url: baseUrl, model };
}

/** An `mcp.servers` entry. */
export function mcpServer(server: { command: string; args: readonly string[] }, settings: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: server.command, args: [...server.args], ...settings };
}
