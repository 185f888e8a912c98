import { spawn } from "node:child_process";

/**
 * Best effort: the platform's opener for a URL (`open`, `xdg-open`, `start`). The caller has
 * printed the URL already, so a missing opener changes nothing.
 */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform): void {
  const [command, args] = platform === "darwin" ? ["open", [url]] : platform === "win32" ? ["cmd", ["/c", "start", "", url]] : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { detached: true, stdio: "ignore" });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // no opener: the printed URL is the way
  }
}
