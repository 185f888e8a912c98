// The environment a llama-server child gets: an allow-list, not our whole environment. Our
// process may hold API keys and tokens the child has no business seeing, and llama.cpp reads
// LLAMA_ARG_* variables as hidden flags, which would make the command line lie.

const ALLOWED = new Set([
  "PATH", "HOME", "USER", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TMP", "TEMP",
  "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT",
  "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
  "ONEAPI_DEVICE_SELECTOR", "OMP_NUM_THREADS",
]);

/** GPU runtimes and ggml backends are configured through these families. */
const ALLOWED_PREFIXES = ["CUDA_", "GGML_", "VK_", "HSA_", "MTL_"];

export function childEnv(parent: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (ALLOWED.has(key) || ALLOWED_PREFIXES.some((prefix) => key.startsWith(prefix))) env[key] = value;
  }
  return env;
}
