import { appendFileSync } from "node:fs";

interface ResolveResult {
  url: string;
}

/**
 * Module customization hook (runs on the loader thread). The URL is written synchronously before
 * the resolution is handed back, so every module the process imported before it wrote a line is
 * already in the file when that line is read: no exit handler, no flush, no sleep.
 */
export async function resolve(specifier: string, context: unknown, nextResolve: (specifier: string, context: unknown) => Promise<ResolveResult>): Promise<ResolveResult> {
  const result = await nextResolve(specifier, context);
  const file = process.env.LOCAL_AI_TEST_MODULE_LOG;
  if (file !== undefined && file !== "") appendFileSync(file, `${result.url}\n`);
  return result;
}
