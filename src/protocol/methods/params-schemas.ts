import { z } from "zod";
import { elicitationAnswerSchema } from "../../wire/elicitation-answer-schema.js";
import { contentPartSchema } from "../../shared/content-part-schema.js";

/**
 * The zod params schemas of the stdio methods, in one module that each method imports on its
 * first call (see `MethodDefinition.params`): zod and the schema construction stay off the path
 * of `ping`, the first thing a host times. The types are imported with `import type`.
 * Params are strict (a misspelt `sesion_id` is an error, never a silently new session), except
 * `initialize`'s, which a newer host may extend before the version negotiation has run.
 */

export const initializeParams = z
  .object({
    protocol_versions: z.array(z.union([z.number().int(), z.string()])).optional(),
    client: z.object({ name: z.string().optional(), version: z.string().optional() }).loose().optional(),
  })
  .loose();

const contentPart = contentPartSchema();
/** An MCP resource attached to the input: its contents are given to the model (docs/tools.md#resources). */
const resourcePart = z.object({ type: z.literal("resource"), server: z.string().min(1), uri: z.string().min(1) }).strict();

export const chatParams = z
  .object({
    user_id: z.string().optional(),
    session_id: z.string().optional(),
    agent: z.string().optional(),
    input: z.union([z.string(), z.array(z.discriminatedUnion("type", [...contentPart.options, resourcePart]))]).optional(),
    /** An MCP prompt whose messages open the turn instead of `input`. */
    prompt: z.object({ server: z.string().min(1), name: z.string().min(1), arguments: z.record(z.string(), z.string()).optional() }).strict().optional(),
    resume: z.boolean().default(false),
    approve_execution: z.boolean().default(false),
    /** Resuming a turn paused on an MCP server's question (`pending_elicitation`): the user's answer. */
    elicitation: elicitationAnswerSchema.optional(),
    /** Seconds the model stays loaded once idle after this turn: 0 = unload then, -1 = never (docs/models.md). */
    keep_alive: z.number().int().min(-1).optional(),
  })
  .strict()
  .refine((params) => params.resume || params.prompt !== undefined || (params.input !== undefined && params.input.length > 0), {
    message: "required (a non-empty string or content parts) unless resume is true or a prompt is given",
    path: ["input"],
  })
  .refine((params) => params.elicitation === undefined || params.resume, {
    message: "answers a paused turn's question: give it with resume: true",
    path: ["elicitation"],
  })
  .refine((params) => params.prompt === undefined || (params.input === undefined && !params.resume), {
    message: "a prompt opens a new turn: give it without input and without resume",
    path: ["prompt"],
  });

/** `mcp_prompts` / `mcp_resources`: nothing to choose. */
export const mcpListParams = z.object({}).strict();

export const planParams = z
  .object({
    /** Plan only this model (a key under llama.models). */
    model: z.string().min(1).optional(),
    /** Plan every configured model. */
    all: z.boolean().optional(),
  })
  .strict()
  .refine((input) => !(input.model !== undefined && input.all === true), { message: "give either model or all: true, not both", path: ["all"] });

export const warmUpParams = z.object({ agent: z.string().optional(), keep_alive: z.number().int().min(-1).optional() }).strict();

export const pullParams = z
  .object({
    /** A local path, an http(s) URL or an hf: reference. */
    ref: z.string().trim().min(1),
    /** Download even when the fit check says the model does not fit. */
    force: z.boolean().default(false),
  })
  .strict();

export const unloadParams = z.object({ model: z.string().min(1).optional() }).strict();

export const psParams = z.object({}).strict();

export const metricsParams = z.object({}).strict();

/** `tokenize {model?, content, add_special?, parse_special?, with_pieces?}`: POST /tokenize's fields. */
export const tokenizeParams = z
  .object({
    /** A `llama.models` name; absent = the default agent's model. */
    model: z.string().min(1).optional(),
    content: z.string(),
    /** Add BOS as a prompt has it (default false). */
    add_special: z.boolean().optional(),
    /** Special-token text becomes its token (default true). */
    parse_special: z.boolean().optional(),
    /** Also each token's text, in `pieces`. */
    with_pieces: z.boolean().optional(),
  })
  .strict();

/** `detokenize {model?, tokens}`. */
export const detokenizeParams = z.object({ model: z.string().min(1).optional(), tokens: z.array(z.number().int().min(0)) }).strict();

export const cancelParams = z.object({ request_id: z.union([z.string(), z.number()]).optional() }).strict();

/** JSON-RPC `$/cancelRequest {id}`. */
export const cancelRequestParams = z.object({ id: z.union([z.string(), z.number()]) }).strict();
