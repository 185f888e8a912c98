import { existsSync } from "node:fs";
import path from "node:path";

/** Where Homebrew puts libomp (Apple silicon, then Intel). */
export const LIBOMP_PREFIXES: readonly string[] = ["/opt/homebrew/opt/libomp", "/usr/local/opt/libomp"];

export type OpenMpSetup = { ok: true; root: string | null } | { ok: false; reason: string };

/**
 * AppleClang ships without OpenMP, and this build exists for OpenMP: on macOS it needs Homebrew's
 * libomp (found through OpenMP_ROOT), and refuses with what to do otherwise. Elsewhere the
 * compiler brings OpenMP (GCC's libgomp) and nothing is needed.
 */
export function openMpSetup(os: NodeJS.Platform, exists: (file: string) => boolean = existsSync): OpenMpSetup {
  if (os !== "darwin") return { ok: true, root: null };
  const root = LIBOMP_PREFIXES.find((prefix) => exists(path.join(prefix, "include", "omp.h")));
  if (root !== undefined) return { ok: true, root };
  return {
    ok: false,
    reason:
      "macOS: Apple's compiler has no OpenMP, which this build is for. Install it with `brew install libomp` and run this again, " +
      "or skip it: on macOS the embedded engine's prebuilt Metal binary is the one to use (llama.embedded_binary: auto picks it)",
  };
}
