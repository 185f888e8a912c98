import { readFile, stat } from "node:fs/promises";

export interface TokenSources {
  flag?: string | undefined;
  flagFile?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  configToken: string | null;
  configFile: string | null;
}

/**
 * The bearer token, first found wins: `--bearer-token`, `--bearer-token-file`, `$LOCAL_AI_TOKEN`,
 * `http.bearer_token_file`, `http.bearer_token`. A file or the environment keeps the token off the
 * command line, where every local user can read it in the process list. A token file readable by
 * others is refused rather than trusted. null: no auth.
 */
export async function resolveBearerToken(sources: TokenSources): Promise<string | null> {
  if (sources.flag !== undefined && sources.flag !== "") return sources.flag;
  if (sources.flagFile !== undefined) return readTokenFile(sources.flagFile, "--bearer-token-file");
  const fromEnv = sources.env.LOCAL_AI_TOKEN;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  if (sources.configFile !== null) return readTokenFile(sources.configFile, "http.bearer_token_file");
  return sources.configToken;
}

/** The first line of a token file; refused when others may read it, missing or empty (`origin` names the setting in the error). */
export async function readTokenFile(file: string, origin: string): Promise<string> {
  let text: string;
  try {
    const info = await stat(file);
    if (process.platform !== "win32" && (info.mode & 0o077) !== 0) {
      throw new Error(`${origin} ${file} is readable by other users (mode ${(info.mode & 0o777).toString(8)}); chmod 600 it`);
    }
    text = await readFile(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    throw new Error(reason.startsWith(origin) ? reason : `${origin} ${file}: ${reason}`);
  }
  const token = text.split(/\r?\n/)[0]?.trim() ?? "";
  if (token === "") throw new Error(`${origin} ${file} is empty`);
  return token;
}
