import type { Config } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import { RuntimeError } from "../../shared/runtime-error.js";

/**
 * The schema checks `http.port` against llama-server ports at load, but `--port` can change it
 * afterwards, so serve-http checks again before it listens, against the ports each model's
 * driver listens on (only llama-server opens one: its `port`).
 */
export function assertNoPortClash(config: Config, httpPort: number): void {
  for (const [name, model] of Object.entries(config.llama.models)) {
    if (driverOf(model).ports(name, model).some((use) => use.port === httpPort)) {
      throw new RuntimeError("config_invalid", `port ${httpPort} clashes: http.port (or --port) and llama.models.${name}.port must differ`, {
        details: { keys: ["http.port", `llama.models.${name}.port`] },
      });
    }
  }
}
