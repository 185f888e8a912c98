/** Every complete line `stream` writes from now on, appended to `into` as it arrives (a log tail for assertions). */
export function collectLines(stream: NodeJS.ReadableStream, into: string[]): void {
  let partial = "";
  stream.on("data", (chunk: string | Buffer) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop() ?? "";
    into.push(...parts);
  });
}
