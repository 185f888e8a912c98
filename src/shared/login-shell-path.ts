import { execFileSync } from "node:child_process";

const MARK = "__LOCAL_AI_PATH__";

/**
 * The PATH the user's login shell sets up (macOS apps started from Finder never run it), or null
 * when it cannot be read within `timeoutMs`. The shell runs as a login and interactive shell
 * (`-ilc`, where zsh and bash read the files nvm and Homebrew write to), with stdin closed and its
 * noise discarded: only what is printed between the marks counts.
 */
export function readLoginShellPath(shell: string | undefined, timeoutMs = 3000): string | null {
  try {
    const out = execFileSync(shell !== undefined && shell.startsWith("/") ? shell : "/bin/zsh", ["-ilc", `printf '%s%s%s' '${MARK}' "$PATH" '${MARK}'`], {
      encoding: "utf8",
      timeout: timeoutMs,
      stdio: ["ignore", "pipe", "ignore"],
    });
    const match = new RegExp(`${MARK}(.*?)${MARK}`, "s").exec(out);
    const path = match?.[1]?.trim() ?? "";
    return path === "" ? null : path;
  } catch {
    return null;
  }
}
