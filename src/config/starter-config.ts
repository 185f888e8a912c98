/**
 * The model `local-ai init` writes when no `--model` is given: Qwen3 4B, Q4_K_M (about 2.5 GB on
 * disk, about 3.5 GB of memory at ctx_size 4096), from Qwen's own GGUF repository. Small enough for
 * most laptops, good at following instructions and at calling tools, and one of node-llama-cpp's
 * own recommended models. docs/chat.md says why; `local-ai plan` says whether it fits.
 */
export const DEFAULT_MODEL_REFERENCE = "hf:Qwen/Qwen3-4B-GGUF:Q4_K_M";

/**
 * A YAML double-quoted scalar for any text: JSON's string syntax is valid YAML, and `$` is doubled
 * because the loader substitutes `${NAME}` in values (`$$` is a literal `$`).
 */
function yamlString(value: string): string {
  // A function replacer: in a replacement string "$$" would itself mean one "$".
  return JSON.stringify(value.replaceAll("$", () => "$$"));
}

/**
 * A starter config.yaml: one model, one agent, no tools, and comments in the words of
 * config.example.yaml so the file explains itself. The values are the defaults except where a
 * first config needs a choice (the model).
 */
export function renderStarterConfig(modelReference: string): string {
  // The comment column of config.example.yaml, where the reference is short enough to allow it.
  const pathLine = `      path: ${yamlString(modelReference)}`;
  const pathEntry = pathLine.length < 35 ? pathLine.padEnd(35) : `${pathLine}   `;
  return `# local-ai configuration, written by \`local-ai init\`. Every key is optional; the values shown
# are the defaults unless noted. Relative paths resolve against this file's folder.
# Misspelt keys are reported as errors, never ignored. Every key: config.example.yaml and
# docs/config.md. Check it with \`local-ai doctor\`.

app:
  data_dir: ./.local-ai          # sessions, checkpoints, memory; created if missing
  log_level: info                # fatal | error | warn | info | debug | trace | silent (LOCAL_AI_LOG_LEVEL overrides); logs go to stderr only

llama:
  models:
    default:                     # a model name; agents refer to it
      engine: embedded           # embedded (node-llama-cpp in process) | llama-server (supervised child) | openai (remote endpoint)
${pathEntry}# the GGUF model: a file, an https:// URL or an hf: reference (\`local-ai pull\` downloads it)
      ctx_size: 4096             # context window in tokens
      gpu_layers: auto           # auto (fit to free VRAM) | a number of layers to offload

agents:
  assistant:                     # an agent name; the first agent is the default
    model: default               # a key of llama.models
    system_prompt: You are a helpful assistant.   # the system message of every turn
    tools: []                    # tool names or globs this agent may call; "*" = all (none here: add MCP servers below first)
    temperature: 0.7             # sampling temperature; 0 = greedy
    max_tokens: 1024             # token limit per model step

mcp:
  servers: {}                    # MCP tool servers by name, started at warm-up; an example follows
  # servers:
  #   files:
  #     command: npx                                   # executable to start (stdio transport)
  #     args: ["-y", "@modelcontextprotocol/server-filesystem", "."]   # its arguments; cwd defaults to this file's folder
  #     requires_approval: ["write_file"]              # tool names that ask before they run (\`local-ai chat\` asks you), or true for all
`;
}
