import type { HubAccess } from "./hub-access.js";

/** What node-llama-cpp resolves an `hf:` reference to: the file's URL on the hub and the name it saves it under. */
export interface ResolvedHubReference {
  url: string;
  fileName: string;
}

interface ParseModelUriModule {
  parseModelUri(uri: string, convertUrlToSupportedUri: boolean, endpoints?: { huggingFace?: string }): unknown;
  resolveParsedModelUri(
    uri: unknown,
    options: { tokens?: { huggingFace?: string | null }; endpoints?: { huggingFace?: string }; signal?: AbortSignal },
  ): Promise<{ resolvedUrl: string; fullFilename: string } | null | undefined>;
}

/**
 * Resolves `hf:owner/repo:QUANT` (or `hf:owner/repo/file.gguf`) exactly as node-llama-cpp does
 * (the manifest request, the quantization picked, the file name findDownloaded looks for), so the
 * URL can be read and downloaded here, with the redirects followed by guardedFetch. Its resolver
 * is not in node-llama-cpp's public exports: it is loaded from the module's files (the version is
 * pinned; test/e2e/pull-cli.test.ts covers it). The manifest request goes to the hub endpoint
 * with the token; fetch drops the Authorization header on a redirect to another origin.
 */
export async function resolveHubReference(ref: string, access: HubAccess, signal?: AbortSignal): Promise<ResolvedHubReference> {
  const module = (await import(new URL("./utils/parseModelUri.js", import.meta.resolve("node-llama-cpp")).href)) as ParseModelUriModule;
  const endpoints = { huggingFace: access.endpoint };
  const parsed = module.parseModelUri(ref.trim(), false, endpoints);
  if (parsed === null || parsed === undefined) throw new Error(`Invalid Hugging Face URI: ${ref}`);
  const resolved = await module.resolveParsedModelUri(parsed, { tokens: { huggingFace: access.token ?? null }, endpoints, ...(signal ? { signal } : {}) });
  if (resolved === null || resolved === undefined) throw new Error(`Invalid Hugging Face URI: ${ref}`);
  return { url: resolved.resolvedUrl, fileName: resolved.fullFilename };
}
