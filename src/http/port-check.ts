import type { Config } from "../config/schema.js";
import { RuntimeError } from "../shared/runtime-error.js";

/**
 * The schema checks `http.port` against llama-server ports at load, but `--port` can change it
 * afterwards, so serve-http checks again before it listens. Only llama-server models listen on
 * their `port` (embedded and openai engines open none), so only those can clash.
 */
export function assertNoPortClash(config: Config, httpPort: number): void {
  for (const [name, model] of Object.entries(config.llama.models)) {
    if (model.engine === "llama-server" && model.port === httpPort) {
      throw new RuntimeError("config_invalid", `port ${httpPort} clashes: http.port (or --port) and llama.models.${name}.port must differ`, {
        details: { keys: ["http.port", `llama.models.${name}.port`] },
      });
    }
  }
}
