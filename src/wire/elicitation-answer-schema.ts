import { z } from "zod";
import type { ElicitationAnswer } from "../tools/tool-types.js";

/**
 * The answer to an MCP server's question, as a host sends it to resume a paused turn: stdio
 * `chat {resume: true, elicitation}` and session-mode HTTP chat completions read the same shape.
 */
export const elicitationAnswerSchema = z
  .object({
    action: z.enum(["accept", "decline", "cancel"]),
    content: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])).optional(),
  })
  .strict();

// A change to ElicitationAnswer that is not made here is a compile error.
type Parsed = z.infer<typeof elicitationAnswerSchema>;
const sameShape: [Parsed] extends [ElicitationAnswer] ? ([ElicitationAnswer] extends [Parsed] ? true : false) : false = true;
void sameShape;
