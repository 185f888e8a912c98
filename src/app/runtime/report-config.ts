import type { Logger } from "pino";
import type { ConfigState } from "../../config/load-config.js";

/** One warning at start when the config is missing or invalid: the server still starts and says what is wrong. */
export function reportConfigState(configState: ConfigState, logger: Logger): void {
  if (configState.status === "missing") {
    logger.warn({ path: configState.path }, "no config file; methods that need one will answer config_missing");
  } else if (configState.status === "invalid") {
    logger.warn({ path: configState.path, problems: configState.problems }, "config is invalid; methods that need it will answer config_invalid");
  }
}
