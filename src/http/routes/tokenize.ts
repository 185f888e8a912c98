import type { Context, Hono } from "hono";
import { z } from "zod";
import type { Engine } from "../../engine/engine.js";
import { HttpError } from "../http-error.js";
import type { HttpDeps, ModelAccess } from "../http-deps.js";
import { parseBody } from "../request/parse-body.js";
import { readJson } from "../request/read-json.js";
import { requestAbort } from "../request/request-abort.js";
import { requestRecord } from "../request/request-record.js";
import { requestKeyScope } from "../request/request-key.js";
import type { ModelResolver } from "../resolve-model.js";

const tokenizeBody = z
  .object({ model: z.string().min(1).optional(), content: z.string(), add_special: z.boolean().optional(), parse_special: z.boolean().optional(), with_pieces: z.boolean().optional() })
  .loose();
const detokenizeBody = z.object({ model: z.string().min(1).optional(), tokens: z.array(z.number().int().min(0)) }).loose();

/**
 * POST /tokenize and /detokenize (llama-server's shape, plus `model`): the model's own tokenizer,
 * on the model behind the named agent or model (the default agent's when absent).
 */
export function registerTokenizeRoutes(app: Hono, deps: HttpDeps, resolver: ModelResolver, models: ModelAccess): void {
  const engineFor = async (c: Context, model: string | undefined, need: "tokenize" | "detokenize"): Promise<Engine> => {
    const resolved = resolver.resolve(model, models.names);
    requestRecord(c)?.resolved(resolved.agent, resolved.modelName);
    requestKeyScope(c).assertModel(resolved);
    const engine = await models.engine(resolved.modelName);
    if (engine[need] === undefined) {
      throw new HttpError("tokenize_not_supported", `Model "${resolved.modelName}" (engine ${engine.kind}) has no tokenizer here: an openai upstream's tokenizer is not reachable`, "model");
    }
    return engine;
  };
  app.post("/tokenize", async (c) => {
    const body = parseBody(tokenizeBody, await readJson(c));
    const engine = await engineFor(c, body.model, "tokenize");
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      const result = await (engine.tokenize as NonNullable<Engine["tokenize"]>).call(engine, {
        content: body.content,
        ...(body.add_special === undefined ? {} : { addSpecial: body.add_special }),
        ...(body.parse_special === undefined ? {} : { parseSpecial: body.parse_special }),
        withPieces: body.with_pieces === true,
        ...(models.maxTokenizeTokens === undefined ? {} : { maxTokens: models.maxTokenizeTokens }),
        signal: abort.controller.signal,
      });
      const pieces = result.pieces;
      return c.json({ tokens: pieces === undefined ? result.tokens : result.tokens.map((id, index) => ({ id, piece: pieces[index] ?? "" })) });
    } finally {
      abort.dispose();
    }
  });
  app.post("/detokenize", async (c) => {
    const body = parseBody(detokenizeBody, await readJson(c));
    const engine = await engineFor(c, body.model, "detokenize");
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      const content = await (engine.detokenize as NonNullable<Engine["detokenize"]>).call(engine, { tokens: body.tokens, signal: abort.controller.signal });
      return c.json({ content });
    } finally {
      abort.dispose();
    }
  });
}
