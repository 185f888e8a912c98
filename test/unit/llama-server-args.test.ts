import assert from "node:assert/strict";
import { test } from "node:test";
import { childEnv } from "../../src/engine/llama-server/child-env.js";
import {
  BASELINE_SUPPORTED_FLAGS, buildServerArgs, managedFlagsIn, parseHelpFlags, redactServerArgs, type ServerArgsInput,
} from "../../src/engine/llama-server/server-args.js";

// Lines copied from a real `llama-server --help` (llama.cpp 0.4.0-dev), including the tricky
// shapes: aliases after a wide gap, a flag column that overflows into the description,
// metavars with punctuation, and flags mentioned only in prose.
const HELP_SAMPLE = `----- common params -----

-h,    --help, --usage                  print usage and exit
-t,    --threads N                      number of CPU threads to use during generation (default: -1)
-c,    --ctx-size N                     size of the prompt context (default: 0, 0 = loaded from model)
-kvo,  --kv-offload, -nkvo, --no-kv-offload
                                        whether to enable KV cache offloading (default: enabled)
-l,    --logit-bias TOKEN_ID(+/-)BIAS   modifies the likelihood of token appearing in the completion,
-ngl,  --gpu-layers, --n-gpu-layers N   max. number of layers to store in VRAM
-m,    --model FNAME                    model path to load
--draft, --draft-n, --draft-max N       the argument has been removed. use --spec-draft-n-max or
                                        --spec-ngram-mod-n-max
-np,   --parallel N                     number of server slots (default: -1, -1 = auto)
--host HOST                             ip address to listen, or bind to an UNIX socket if the address ends
--port PORT                             port to listen (default: 8080)
--api-key KEY                           API key to use for authentication
--slots, --no-slots                     expose slots monitoring endpoint (default: enabled)
--jinja, --no-jinja                     whether to use jinja template engine for chat (default: enabled)
`;

const base: ServerArgsInput = {
  modelPath: "/models/m.gguf",
  port: 8081,
  ctxSize: 4096,
  gpuLayers: 99,
  threads: 4,
  parallel: 2,
  extraArgs: [],
  apiKey: "k3y",
  supportedFlags: parseHelpFlags(HELP_SAMPLE),
};

test("parseHelpFlags reads every alias of the flag column and nothing from the prose", () => {
  const flags = parseHelpFlags(HELP_SAMPLE);
  for (const flag of ["-h", "--help", "--usage", "-t", "--threads", "-kvo", "--no-kv-offload", "-nkvo", "-l", "--logit-bias",
    "-ngl", "--gpu-layers", "--n-gpu-layers", "-m", "--model", "--draft-max", "-np", "--parallel", "--host", "--port",
    "--api-key", "--slots", "--no-slots", "--jinja"]) {
    assert.ok(flags.has(flag), `${flag} should be found`);
  }
  assert.ok(!flags.has("--spec-draft-n-max"), "a flag named only in a description is not supported");
  assert.ok(!flags.has("--spec-ngram-mod-n-max"));
  assert.ok(!flags.has("--no-webui"));
  assert.ok(!flags.has("-1"));
});

test("buildServerArgs launches from the plan with the issue's spellings, extra_args last", () => {
  const args = buildServerArgs({ ...base, extraArgs: ["--temp", "0.2"] });
  assert.deepEqual(args, [
    "-m", "/models/m.gguf", "--host", "127.0.0.1", "--port", "8081",
    "-c", "4096", "-ngl", "99", "--parallel", "2", "-t", "4", "--api-key", "k3y", "--jinja", "--slots",
    "--temp", "0.2",
  ]);
});

test("buildServerArgs drops flags the binary does not list and keeps the ones that make it ours", () => {
  const args = buildServerArgs({ ...base, supportedFlags: new Set(["--ctx-size", "--n-gpu-layers", "--no-webui"]) });
  assert.deepEqual(args, ["-m", "/models/m.gguf", "--host", "127.0.0.1", "--port", "8081", "--ctx-size", "4096", "--n-gpu-layers", "99", "--no-webui"]);
});

test("buildServerArgs leaves auto values to llama-server and passes -ngl 0 for CPU only", () => {
  const auto = buildServerArgs({ ...base, gpuLayers: -1, threads: 0, parallel: 0 });
  assert.ok(!auto.includes("-ngl") && !auto.includes("-t") && !auto.includes("--parallel"));
  const cpu = buildServerArgs({ ...base, gpuLayers: 0 });
  assert.deepEqual(cpu.slice(cpu.indexOf("-ngl"), cpu.indexOf("-ngl") + 2), ["-ngl", "0"]);
});

test("the baseline flag set still yields a complete launch when --help cannot be read", () => {
  const args = buildServerArgs({ ...base, supportedFlags: BASELINE_SUPPORTED_FLAGS });
  for (const flag of ["-c", "-ngl", "--parallel", "-t", "--api-key"]) assert.ok(args.includes(flag), flag);
});

test("buildServerArgs is pure: same input, same output, input untouched", () => {
  const extraArgs = ["--flash-attn", "on"];
  const first = buildServerArgs({ ...base, extraArgs });
  const second = buildServerArgs({ ...base, extraArgs });
  assert.deepEqual(first, second);
  assert.deepEqual(extraArgs, ["--flash-attn", "on"]);
});

test("redactServerArgs hides the per-launch key", () => {
  const redacted = redactServerArgs(buildServerArgs(base));
  assert.ok(!redacted.includes("k3y"));
  assert.equal(redacted[redacted.indexOf("--api-key") + 1], "[redacted]");
});

test("the key goes in a file when the binary lists --api-key-file, so it is never on the command line", () => {
  const supportedFlags = new Set([...base.supportedFlags, "--api-key-file"]);
  const args = buildServerArgs({ ...base, supportedFlags, apiKeyFile: "/data/run/llama-server-m.key" });
  assert.ok(!args.includes("k3y") && !args.includes("--api-key"), args.join(" "));
  assert.deepEqual(args.slice(args.indexOf("--api-key-file"), args.indexOf("--api-key-file") + 2), ["--api-key-file", "/data/run/llama-server-m.key"]);
  // An older binary without the flag still gets the key the only way it can take it.
  assert.equal(buildServerArgs({ ...base, apiKeyFile: "/x.key" })[buildServerArgs({ ...base, apiKeyFile: "/x.key" }).indexOf("--api-key") + 1], "k3y");
});

test("managedFlagsIn finds flags that would redirect the server away from our checks", () => {
  assert.deepEqual(managedFlagsIn(["--port", "9000", "--temp", "1", "--host=0.0.0.0"]), ["--port", "--host"]);
  assert.deepEqual(managedFlagsIn(["--api-key-file", "k", "-m", "x"]), ["--api-key-file", "-m"]);
  assert.deepEqual(managedFlagsIn(["--ctx-size", "8192", "--portable"]), []);
});

test("childEnv passes the allow-list (and GPU families) and nothing else", () => {
  const env = childEnv({
    PATH: "/bin", HOME: "/h", LANG: "C", LD_LIBRARY_PATH: "/l", CUDA_VISIBLE_DEVICES: "0", GGML_VK_VISIBLE_DEVICES: "1",
    OPENAI_API_KEY: "secret", LLAMA_ARG_PORT: "9999", LOCAL_AI_LOG_LEVEL: "debug", UNSET: undefined,
  });
  assert.deepEqual(env, { PATH: "/bin", HOME: "/h", LANG: "C", LD_LIBRARY_PATH: "/l", CUDA_VISIBLE_DEVICES: "0", GGML_VK_VISIBLE_DEVICES: "1" });
});

test("rerank: --reranking where the build lists it (--rerank is its alias), once even when extra_args has it, nothing otherwise", () => {
  const help = `${HELP_SAMPLE}--rerank, --reranking                   enable reranking endpoint on server (default: disabled)\n`;
  const supportedFlags = parseHelpFlags(help);
  const count = (args: string[]): number => args.filter((arg) => arg === "--reranking" || arg === "--rerank").length;
  assert.equal(count(buildServerArgs({ ...base, supportedFlags, rerank: true })), 1);
  assert.ok(buildServerArgs({ ...base, supportedFlags, rerank: true }).includes("--reranking"));
  assert.equal(count(buildServerArgs({ ...base, supportedFlags, rerank: true, extraArgs: ["--rerank"] })), 1);
  assert.equal(count(buildServerArgs({ ...base, supportedFlags })), 0);
  // A build without the flag gets none (the server then answers rerank with its own refusal).
  assert.equal(count(buildServerArgs({ ...base, rerank: true })), 0);
});

test("buildServerArgs reads prompts in 512-token batches (a cancel lands between them), unless extra_args sizes the batches", () => {
  const supportedFlags = new Set([...BASELINE_SUPPORTED_FLAGS, "-b", "--batch-size"]);
  const args = buildServerArgs({ ...base, supportedFlags });
  assert.deepEqual(args.slice(args.indexOf("-b"), args.indexOf("-b") + 2), ["-b", "512"]);
  for (const extraArgs of [["-ub", "2048"], ["--batch-size", "4096"], ["--ubatch-size=1024"]]) {
    assert.ok(!buildServerArgs({ ...base, supportedFlags, extraArgs }).slice(0, -extraArgs.length).some((arg) => arg === "-b"), JSON.stringify(extraArgs));
  }
  assert.ok(!buildServerArgs(base).includes("-b"), "a binary that does not list -b gets none");
});
