import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "./config-yaml.js";
import { startHttpServer, type HttpServer } from "./http-cli-server.js";
import { LONG_PROMPT_SHAPE } from "./long-prompt.js";

/**
 * The built CLI's serve-http on the 32 k bench model (one thread, one sequence, 4-token answers):
 * the long-prompt HTTP tests' server. `http`: settings of the config's http section; `env`: the CLI's.
 */
export async function startLongPromptServer(http: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<HttpServer> {
  const model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE });
  return startHttpServer(
    configYaml({
      llama: { models: { default: localModel(model, { ctx_size: 32768, threads: 1, parallel: 1 }) } },
      agents: { assistant: { temperature: 0, max_tokens: 4 } },
      ...(Object.keys(http).length === 0 ? {} : { http }),
    }),
    [],
    env,
  );
}
