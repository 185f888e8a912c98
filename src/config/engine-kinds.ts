/** The engines a model can run on (config `models.*.engine`); every list of kinds (schemas, the driver table) is this one. */
export const ENGINE_KINDS = ["embedded", "llama-server", "openai"] as const;

export type EngineKind = (typeof ENGINE_KINDS)[number];
