import { createInterface } from "node:readline/promises";

/**
 * One yes/no question at a terminal: the prompt on `output` (stderr, so stdout stays the command's
 * result), the answer from `input`. Enter gives `byDefault`; Ctrl-C or Ctrl-D at the prompt is no.
 */
export async function askYesNo(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, question: string, byDefault: boolean): Promise<boolean> {
  const lines = createInterface({ input, output, terminal: true });
  const closed = new Promise<null>((resolve) => lines.once("close", () => resolve(null)));
  // Ctrl-C at the prompt answers no (readline turns it into SIGINT on the interface, not the process).
  lines.once("SIGINT", () => lines.close());
  try {
    const answer = await Promise.race([lines.question(question), closed]);
    if (answer === null) {
      output.write("\n");
      return false;
    }
    const text = answer.trim().toLowerCase();
    if (text === "") return byDefault;
    return text === "y" || text === "yes";
  } finally {
    lines.close();
  }
}
