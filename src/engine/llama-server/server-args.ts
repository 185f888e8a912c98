// The llama-server command line, as a pure function of the launch plan. The engine launches
// exactly this and `local-ai plan` shows exactly this, so the two can never disagree.
//
// llama.cpp renames and retires flags between releases, so optional flags are only passed
// when the binary's own `--help` lists them (see help-probe.ts); the few flags without which
// the process could not be ours (-m, --host, --port) are always passed.

/** The server only ever listens on loopback: it is a private child, not a network service. */
export const LLAMA_SERVER_HOST = "127.0.0.1";

export interface ServerArgsInput {
  modelPath: string;
  port: number;
  ctxSize: number;
  /** Layers offloaded to the GPU; 0 = CPU only; negative = leave it to llama-server. */
  gpuLayers: number;
  /** CPU threads; 0 or negative = leave it to llama-server. */
  threads: number;
  /** Server slots (concurrent generations); 0 or negative = leave it to llama-server. */
  parallel: number;
  /** `llama.models.<name>.extra_args`, appended last so that the user's word wins. */
  extraArgs: readonly string[];
  /** Per-launch key: requests carry it, and an answer that rejects it is someone else's server. */
  apiKey: string;
  /** A file holding apiKey; passed as `--api-key-file` when the binary lists it, keeping the key off the command line. */
  apiKeyFile?: string;
  /** Flags this binary supports (from `--help`); see parseHelpFlags. */
  supportedFlags: ReadonlySet<string>;
  /** `llama.models.<name>.rerank`: the rerank endpoint on (rank pooling; the server then refuses chat). */
  rerank?: boolean;
}

/**
 * Flags known to every llama-server build of the last two years. Used when `--help` cannot be
 * read, so that a failed probe degrades to "assume the basics" rather than "pass nothing".
 */
export const BASELINE_SUPPORTED_FLAGS: ReadonlySet<string> = new Set([
  "-m", "--model", "--host", "--port", "-c", "--ctx-size", "-ngl", "--n-gpu-layers",
  "-np", "--parallel", "-t", "--threads", "--api-key",
]);

/** Each optional setting with its spellings, preferred first (the spelling leads). */
const SPELLINGS = {
  ctxSize: ["-c", "--ctx-size"],
  gpuLayers: ["-ngl", "--n-gpu-layers", "--gpu-layers"],
  parallel: ["--parallel", "-np"],
  threads: ["-t", "--threads"],
  apiKey: ["--api-key"],
  // Tool calls through OpenAI `tools` need the jinja template engine (default on in new builds only).
  jinja: ["--jinja"],
  // The abort check reads /slots (default on in new builds only).
  slots: ["--slots"],
  // Nobody browses to a private child; skip serving the web UI.
  noWebui: ["--no-webui"],
  reranking: ["--reranking", "--rerank"],
  batchSize: ["-b", "--batch-size"],
} as const satisfies Record<string, readonly string[]>;

/**
 * The logical batch (-b): llama-server reads a prompt one such batch per loop turn and handles a
 * cancel (the client closing the stream) only between turns, so its default 2048 keeps reading
 * for seconds after a cancel on a CPU. 512 is the default physical batch (-ub), which sets the
 * actual work per decode: prompts are read as fast, and a cancel lands within 512 tokens.
 */
const SERVER_BATCH_SIZE = 512;
const BATCH_FLAGS = ["-b", "--batch-size", "-ub", "--ubatch-size"];

/** Flags that we own: a user setting them in extra_args would break readiness or ownership checks. */
const MANAGED_FLAGS = ["-m", "--model", "--host", "--port", "--api-key", "--api-key-file"] as const;

function pick(spellings: readonly string[], supported: ReadonlySet<string>): string | null {
  return spellings.find((flag) => supported.has(flag)) ?? null;
}

export function buildServerArgs(input: ServerArgsInput): string[] {
  const supported = input.supportedFlags;
  const args: string[] = ["-m", input.modelPath, "--host", LLAMA_SERVER_HOST, "--port", String(input.port)];
  const add = (spellings: readonly string[], value?: string): void => {
    const flag = pick(spellings, supported);
    if (flag === null) return;
    args.push(flag);
    if (value !== undefined) args.push(value);
  };
  add(SPELLINGS.ctxSize, String(input.ctxSize));
  if (input.gpuLayers >= 0) add(SPELLINGS.gpuLayers, String(input.gpuLayers));
  if (input.parallel > 0) add(SPELLINGS.parallel, String(input.parallel));
  if (input.threads > 0) add(SPELLINGS.threads, String(input.threads));
  if (input.apiKeyFile !== undefined && supported.has("--api-key-file")) args.push("--api-key-file", input.apiKeyFile);
  else add(SPELLINGS.apiKey, input.apiKey);
  add(SPELLINGS.jinja);
  add(SPELLINGS.slots);
  add(SPELLINGS.noWebui);
  // A user who sizes the batches in extra_args (a GPU's -ub 2048) keeps them whole.
  if (!input.extraArgs.some((arg) => BATCH_FLAGS.includes(arg.split("=")[0] ?? arg))) add(SPELLINGS.batchSize, String(SERVER_BATCH_SIZE));
  if (input.rerank === true && !input.extraArgs.some((arg) => (SPELLINGS.reranking as readonly string[]).includes(arg))) add(SPELLINGS.reranking);
  args.push(...input.extraArgs);
  return args;
}

/** The command line with the API key replaced, for logs, errors and `plan`. */
export function redactServerArgs(args: readonly string[]): string[] {
  return args.map((arg, i) => (i > 0 && args[i - 1] === "--api-key" ? "[redacted]" : arg));
}

/** Managed flags found in extra_args (they would point the server elsewhere than we check). */
export function managedFlagsIn(extraArgs: readonly string[]): string[] {
  const found = new Set<string>();
  for (const arg of extraArgs) {
    for (const flag of MANAGED_FLAGS) {
      if (arg === flag || arg.startsWith(`${flag}=`)) found.add(flag);
    }
  }
  return [...found];
}

const FLAG_TOKEN = /(?:^|[\s,])(--?[A-Za-z0-9][A-Za-z0-9-]*)/g;

/**
 * Flags listed by `llama-server --help`. Option lines start with a flag at column 0, aliases
 * separated by ", ", then a metavar, then two or more spaces and the description; only the part
 * before the description is read so that flags merely mentioned in prose are not counted.
 */
export function parseHelpFlags(helpText: string): Set<string> {
  const flags = new Set<string>();
  for (const line of helpText.split(/\r?\n/)) {
    if (!line.startsWith("-")) continue;
    // A gap of 2+ spaces that does not follow an alias comma ends the flag column.
    const gap = /(?<![,\s])\s{2,}(?=\S)/.exec(line);
    const column = gap === null ? line : line.slice(0, gap.index);
    for (const match of column.matchAll(FLAG_TOKEN)) {
      const flag = match[1];
      if (flag !== undefined) flags.add(flag);
    }
  }
  return flags;
}
