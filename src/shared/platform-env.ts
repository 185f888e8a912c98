// Environment variables as each platform treats them. Windows compares their names without case
// (`Path` is `PATH`; process.env there hides this, a copied object does not); macOS starts an app
// from Finder with the bare system PATH, where Homebrew's and nvm's programs are not found.

type Env = Readonly<Record<string, string | undefined>>;

/** The value of `name` in `env`: on Windows whatever the case of the key, elsewhere exactly. */
export function envValue(env: Env, name: string, os: NodeJS.Platform): string | undefined {
  const exact = env[name];
  if (exact !== undefined || os !== "win32") return exact;
  const upper = name.toUpperCase();
  for (const [key, value] of Object.entries(env)) if (key.toUpperCase() === upper && value !== undefined) return value;
  return undefined;
}

/** The PATH of an app that launchd started (Finder, the Dock): only the system folders. */
const BARE_DARWIN_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
/** Where Homebrew (Apple silicon, then Intel) and most installers put programs on macOS. */
export const DARWIN_EXTRA_PATH_DIRS: readonly string[] = ["/opt/homebrew/bin", "/usr/local/bin"];

/**
 * On macOS, a PATH that is missing or exactly launchd's bare one is completed: with the login
 * shell's PATH when `loginShellPath` gives one (nvm, Homebrew, whatever the user's profile adds),
 * and with Homebrew's folders in any case, so a configured `llama-server` or an MCP server's `npx`
 * is found as in a terminal. Any other PATH (a terminal's, one the host app set) is the user's
 * choice and kept. Returns `env` itself when nothing changes.
 */
export function completeDarwinPath<T extends Env>(env: T, os: NodeJS.Platform, loginShellPath: () => string | null = () => null): T {
  if (os !== "darwin") return env;
  const current = env.PATH;
  if (current !== undefined && current !== "" && current !== BARE_DARWIN_PATH) return env;
  const dirs: string[] = [];
  const add = (dir: string): void => {
    if (dir !== "" && !dirs.includes(dir)) dirs.push(dir);
  };
  (loginShellPath() ?? "").split(":").forEach(add);
  (current === undefined || current === "" ? BARE_DARWIN_PATH : current).split(":").forEach(add);
  DARWIN_EXTRA_PATH_DIRS.forEach(add);
  return { ...env, PATH: dirs.join(":") };
}
