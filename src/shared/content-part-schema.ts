import { z } from "zod";

/**
 * The one zod definition of a user content part (`ContentPart` in chat-message.ts): text, or an
 * image by URL, as the stdio `chat` input, the HTTP request's messages and the records on disk
 * accept it. Unknown keys are accepted and dropped. Kept out of chat-message.ts so that module
 * (which the host client reads) loads no zod.
 */
export const textPartSchema = z.object({ type: z.literal("text"), text: z.string() });

/**
 * `url`: what an image part's URL must be. Any string by default (stdio, disk); HTTP refuses an
 * empty one (`z.string().min(1)`), as it always did.
 */
export function contentPartSchema(url: z.ZodString = z.string()) {
  return z.discriminatedUnion("type", [textPartSchema, z.object({ type: z.literal("image_url"), image_url: z.object({ url }) })]);
}
