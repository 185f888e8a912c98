import { globToRegExp } from "../../shared/glob-pattern.js";
import type { ToolScope } from "../../tools/scoped-tool-provider.js";
import { HttpError } from "../http-error.js";
import type { ResolvedModel } from "../resolve-model.js";
import type { ApiKey } from "./api-key.js";

const matcher = (patterns: readonly string[]): ((value: string) => boolean) => {
  if (patterns.includes("*")) return () => true;
  const regexps = patterns.map(globToRegExp);
  return (value) => regexps.some((regexp) => regexp.test(value));
};

/**
 * What the key a request authenticated with may do: the one place its models, endpoints and
 * tools are checked. Refusals are 403 `permission_denied` naming the key and what was refused
 * (each dialect's error shape comes from app.ts's error mapping).
 */
export class KeyScope {
  readonly name: string;
  /** The tools its turns may run; undefined when every tool is allowed. */
  readonly toolScope: ToolScope | undefined;
  private readonly modelAllowed: (name: string) => boolean;
  private readonly endpointAllowed: (path: string) => boolean;

  constructor(key: Pick<ApiKey, "name" | "models" | "endpoints" | "tools">) {
    this.name = key.name;
    this.modelAllowed = matcher(key.models);
    this.endpointAllowed = matcher(key.endpoints);
    this.toolScope = key.tools.includes("*") ? undefined : { holder: `API key "${key.name}"`, patterns: key.tools };
  }

  /** `name`: an agent (what /v1/models lists) or a `llama.models` name named directly. */
  allowsModel(name: string): boolean {
    return this.modelAllowed(name);
  }

  allowsEndpoint(path: string): boolean {
    return this.endpointAllowed(path);
  }

  assertEndpoint(method: string, path: string): void {
    if (!this.endpointAllowed(path)) throw new HttpError("permission_denied", `API key "${this.name}" may not use the endpoint ${method} ${path}`);
  }

  /**
   * After the `model` was resolved: the agent that would answer (or the model named directly) must
   * be the key's; a downloaded model served on demand is checked by its own name, not by the
   * default agent that runs it.
   */
  assertModel(resolved: Pick<ResolvedModel, "id" | "agent" | "modelName" | "downloaded">): void {
    const target = resolved.downloaded === true ? resolved.id : (resolved.agent ?? resolved.modelName);
    if (this.modelAllowed(target)) return;
    const via = target === resolved.id ? "" : ` (agent "${target}")`;
    throw new HttpError("permission_denied", `API key "${this.name}" may not use the model "${resolved.id}"${via}`, "model");
  }
}
