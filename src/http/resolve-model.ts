import { globToRegExp, isGlob } from "../shared/glob-pattern.js";
import { HttpError } from "./http-error.js";

/** http.unknown_model: a name nothing matches is a 404 (`error`) or the default agent's (`default`). */
export type UnknownModelPolicy = "error" | "default";

export interface ModelNames {
  /** Agent name -> its `llama.models` name, in config order (the first is the default). */
  agents: Readonly<Record<string, string>>;
  /** http.model_aliases: exact names or globs -> agent names (validated by the config schema). */
  aliases?: Readonly<Record<string, string>> | undefined;
  unknownModel?: UnknownModelPolicy | undefined;
}

export interface ResolvedModel {
  /** What the client asked for (or the default agent): echoed back as `model`. */
  id: string;
  /** The agent that answers; null when a `llama.models` name was named directly (embeddings, completions). */
  agent: string | null;
  /** The `llama.models` name that serves it. */
  modelName: string;
  /** Set when nothing matched and http.unknown_model: default gave the default agent. */
  fallback?: true;
  /** A GGUF in app.models_dir that no config entry uses (llama.serve_downloaded): the turn runs the default agent on `modelName`. */
  downloaded?: true;
}

/** At most this many names in a 404's list (a models_dir may hold hundreds): GET /v1/models has them all. */
const LISTED_NAMES = 20;

interface GlobAlias {
  pattern: string;
  regexp: RegExp;
  agent: string;
}

/**
 * The `model` of every endpoint that takes one (chat, completions, embeddings, models/{id}, and the
 * other dialects), in this order: an agent's name; an exact alias; a `llama.models` name (only
 * where the endpoint serves models directly); the longest matching glob alias (the first in the
 * config on a tie); then http.unknown_model. Missing `model`: the default agent.
 */
export class ModelResolver {
  private readonly exact = new Map<string, string>();
  private readonly globs: GlobAlias[] = [];

  constructor(private readonly names: ModelNames) {
    for (const [pattern, agent] of Object.entries(names.aliases ?? {})) {
      if (isGlob(pattern)) this.globs.push({ pattern, regexp: globToRegExp(pattern), agent });
      else this.exact.set(pattern, agent);
    }
    // Stable sort: equal lengths keep their config order.
    this.globs.sort((a, b) => b.pattern.length - a.pattern.length);
  }

  /** `modelNames`: the `llama.models` names the endpoint also accepts (none for chat). */
  resolve(requested: string | undefined, modelNames: readonly string[] = []): ResolvedModel {
    return this.resolveName(requested, modelNames);
  }

  private resolveName(requested: string | undefined, modelNames: readonly string[]): ResolvedModel {
    const { agents } = this.names;
    const fallback = Object.keys(agents)[0];
    if (requested === undefined) {
      if (fallback !== undefined) return this.viaAgent(fallback, fallback);
      throw this.notFound("", modelNames);
    }
    if (Object.hasOwn(agents, requested)) return this.viaAgent(requested, requested);
    const exact = this.exact.get(requested);
    if (exact !== undefined) return this.viaAgent(requested, exact);
    if (modelNames.includes(requested)) return { id: requested, agent: null, modelName: requested };
    const glob = this.globs.find((alias) => alias.regexp.test(requested));
    if (glob !== undefined) return this.viaAgent(requested, glob.agent);
    if (this.names.unknownModel === "default" && fallback !== undefined) return { ...this.viaAgent(requested, fallback), fallback: true };
    throw this.notFound(requested, modelNames);
  }

  /** What GET /v1/models lists: the agents, then the exact aliases (globs name no one model). */
  listed(): Array<{ id: string; agent: string }> {
    return [...Object.keys(this.names.agents).map((agent) => ({ id: agent, agent })), ...[...this.exact].map(([id, agent]) => ({ id, agent }))];
  }

  /** The agent that answers when no agent is named (the first configured one). */
  defaultAgent(): string | undefined {
    return Object.keys(this.names.agents)[0];
  }

  private viaAgent(id: string, agent: string): ResolvedModel {
    const modelName = this.names.agents[agent];
    // The config schema refuses an alias to an unknown agent; a hand-made catalog might not.
    if (modelName === undefined) throw new HttpError("model_not_found", `The model ${JSON.stringify(id)} names the agent "${agent}", which is not configured`, "model");
    return { id, agent, modelName };
  }

  /**
   * The 404 for a name nothing serves, naming what does (at most 20 names, then how many more):
   * agents, exact aliases, the endpoint's `llama.models` names and the downloaded models served
   * on demand; `notServed` is a downloaded file that llama.serve_downloaded: false keeps out.
   */
  notFound(requested: string, modelNames: readonly string[], downloaded: readonly string[] = [], notServed?: string): HttpError {
    const known = [...new Set([...Object.keys(this.names.agents), ...this.exact.keys(), ...modelNames, ...downloaded])];
    const globs = this.globs.map((alias) => alias.pattern);
    const shown = known.slice(0, LISTED_NAMES).join(", ");
    const more = known.length > LISTED_NAMES ? ` and ${known.length - LISTED_NAMES} more (GET /v1/models lists them)` : "";
    const listing = `Available: ${shown || "none"}${more}${globs.length > 0 ? `; and any name matching ${globs.join(", ")}` : ""}`;
    const why = notServed === undefined ? "does not exist" : `is a downloaded model (${notServed}) but llama.serve_downloaded is false, so only configured models are served`;
    return new HttpError("model_not_found", `The model ${JSON.stringify(requested.slice(0, 200))} ${why}. ${listing}`, "model");
  }
}
