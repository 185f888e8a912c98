import type { ModelConfig } from "./schema.js";

/** `base_url` as a list (one endpoint, or several for failover); empty when there is none. */
export function baseUrlsOf(model: Pick<ModelConfig, "base_url">): string[] {
  const value = model.base_url;
  return value === null ? [] : typeof value === "string" ? [value] : [...value];
}
