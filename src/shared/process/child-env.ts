/**
 * The environment a child process gets: an allow-list of ours, never the whole of it. Our process
 * may hold API keys and tokens that a child (llama-server, a third-party MCP server) has no
 * business seeing. Each kind of child adds its own names (GPU runtimes, proxies) to the base.
 */
export interface EnvAllowList {
  names: readonly string[];
  prefixes?: readonly string[];
}

/** What any program needs to start: the search path, the user, the locale, temp folders, Windows basics. */
export const BASE_CHILD_ENV: EnvAllowList = {
  names: [
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TMP", "TEMP",
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
    "PROGRAMFILES", "HOMEDRIVE", "HOMEPATH", "USERNAME",
  ],
  prefixes: ["LC_"],
};

/**
 * The variables of `parent` that `BASE_CHILD_ENV` or one of `extra` allows, and nothing else. On
 * Windows names are compared without case (`Path`, `SystemRoot` are how Windows spells them).
 */
export function allowListedEnv(parent: Readonly<Record<string, string | undefined>>, extra: readonly EnvAllowList[] = [], os: NodeJS.Platform = process.platform): Record<string, string> {
  const fold = os === "win32" ? (name: string) => name.toUpperCase() : (name: string) => name;
  const lists = [BASE_CHILD_ENV, ...extra];
  const names = new Set(lists.flatMap((list) => list.names.map(fold)));
  const prefixes = lists.flatMap((list) => (list.prefixes ?? []).map(fold));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    const name = fold(key);
    if (names.has(name) || prefixes.some((prefix) => name.startsWith(prefix))) env[key] = value;
  }
  return env;
}
