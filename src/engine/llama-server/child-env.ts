import { allowListedEnv, type EnvAllowList } from "../../shared/process/child-env.js";

/**
 * What a llama-server child gets beyond the base allow-list: library paths and the GPU runtimes'
 * settings. LLAMA_ARG_* is never passed: llama.cpp reads those as hidden flags, which would make
 * the command line lie.
 */
const LLAMA_SERVER_ENV: EnvAllowList = {
  names: [
    "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "ONEAPI_DEVICE_SELECTOR", "OMP_NUM_THREADS",
  ],
  prefixes: ["CUDA_", "GGML_", "VK_", "HSA_", "MTL_"],
};

export function childEnv(parent: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  return allowListedEnv(parent, [LLAMA_SERVER_ENV]);
}
